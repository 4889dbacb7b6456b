/*
 * Test oracle for kreassign.planning.placement: runs the real Apache Kafka code on cases read from stdin.
 *
 * Run with a JDK 17+ single-file launch against the jars of the pinned Kafka release:
 *     java -cp '/path/to/kafka/libs/*' tests/oracle/PlacementOracle.java < cases.txt
 *
 * First output line: "JAVA <feature version>". Then one block per input block. Input blocks (line based,
 * names and racks percent-encoded UTF-8, "-" for no rack):
 *
 *   GENERATE <id>             ReassignPartitionsCommand.generateAssignment, the --generate action itself,
 *   SEED <long>               against a fake Admin (a java.lang.reflect.Proxy). The tool's static placer
 *   RACKAWARE <true|false>    is reseeded with Random.setSeed, which gives the state of new Random(seed).
 *   NODE <id> <rack>          one per broker, in DescribeCluster response order
 *   BROKERS <id,id,...>       the --broker-list argument
 *   TOPIC <name> <p>:<r,r,..> ...   in topics-JSON order; partitions in the order the broker lists them
 *   END
 *     -> "GENERATE <id>", then "P <topic> <partition> <r,r,...>" sorted, or "ERROR <class> <message>",
 *        then "END".
 *
 *   PLACE <id>                StripedReplicaPlacer(new Random(seed)) alone, several topics in a row on
 *   SEED <long>               one placer, brokers possibly fenced.
 *   BROKER <id> <rack> <0|1>  (fenced flag), in iteration order
 *   SPEC <partitions> <rf>    one per topic
 *   END
 *     -> "PLACE <id>", per SPEC: "S", then "R <r,r,...>" per partition or "ERROR <class> <message>";
 *        then "END".
 *
 *   HMAP <id>                 java.util.HashMap / HashSet iteration order.
 *   KIND <string|int|tp|tpr>  String, Integer, TopicPartition (topic:partition) or TopicPartitionReplica
 *                             (topic:partition:broker) keys
 *   CTOR <default|cap <n>|hashset <k1,k2,...>|copy>   hashset: new HashSet<>(List.of(k1, k2, ...)), then
 *                             the operations below apply to that set; copy: new HashMap<>(map built so
 *                             far), at the end
 *   PUT <key> / CIA <key>     put (HashSet: add) / computeIfAbsent
 *   REMOVE <key>              remove
 *   REMOVEALL <k1,k2,...>     removeAll(List.of(k1, k2, ...)) on the set (a map's keySet())
 *   END
 *     -> "HMAP <id>", "K <key>" per key in iteration order, "END".
 *
 * The admin-client side of describeTopics (the maps KafkaAdminClient builds before returning) is
 * replicated from KafkaAdminClient.handleDescribeTopicsByNamesWithDescribeTopicPartitionsApi of the same
 * release; everything else is the release's own code.
 */

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.DescribeReplicaLogDirsResult;
import org.apache.kafka.clients.admin.DescribeTopicsResult;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicCollection;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.DescribeClusterResponseData;
import org.apache.kafka.common.requests.DescribeClusterResponse;
import org.apache.kafka.metadata.placement.ClusterDescriber;
import org.apache.kafka.metadata.placement.PartitionAssignment;
import org.apache.kafka.metadata.placement.PlacementSpec;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.metadata.placement.TopicAssignment;
import org.apache.kafka.metadata.placement.UsableBroker;
import org.apache.kafka.tools.reassign.ReassignPartitionsCommand;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.stream.Collectors;

public class PlacementOracle {
    private static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        OUT.println("JAVA " + Runtime.version().feature());
        List<String> block = new ArrayList<>();
        String line;
        while ((line = in.readLine()) != null) {
            line = line.strip();
            if (line.isEmpty()) continue;
            if (line.equals("END")) {
                runBlock(block);
                block.clear();
            } else {
                block.add(line);
            }
        }
        OUT.flush();
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    private static String rack(String s) {
        return s.equals("-") ? null : decode(s);
    }

    private static List<Integer> ints(String csv) {
        List<Integer> result = new ArrayList<>();
        if (csv.isEmpty()) return result;
        for (String part : csv.split(",")) result.add(Integer.parseInt(part));
        return result;
    }

    private static String csv(List<Integer> values) {
        return values.stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    private static void runBlock(List<String> block) throws Exception {
        String[] head = block.get(0).split(" ", 2);
        switch (head[0]) {
            case "GENERATE" -> generate(head[1], block.subList(1, block.size()));
            case "PLACE" -> place(head[1], block.subList(1, block.size()));
            case "HMAP" -> hashMap(head[1], block.subList(1, block.size()));
            default -> throw new IllegalArgumentException("unknown block " + head[0]);
        }
    }

    private static void printError(Throwable e) {
        Throwable cause = e;
        while (cause instanceof InvocationTargetException && cause.getCause() != null) cause = cause.getCause();
        OUT.println("ERROR " + cause.getClass().getSimpleName() + " " + cause.getMessage());
    }

    // ---------------------------------------------------------------------------------------------
    // GENERATE: the tool's --generate action on a fake Admin

    private static void generate(String id, List<String> lines) throws Exception {
        long seed = 0;
        boolean rackAware = true;
        List<DescribeClusterResponseData.DescribeClusterBroker> brokers = new ArrayList<>();
        String brokerList = "";
        List<String> topicOrder = new ArrayList<>();
        Map<String, List<TopicPartitionInfo>> partitions = new HashMap<>();
        for (String line : lines) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "SEED" -> seed = Long.parseLong(f[1]);
                case "RACKAWARE" -> rackAware = Boolean.parseBoolean(f[1]);
                case "NODE" -> brokers.add(new DescribeClusterResponseData.DescribeClusterBroker()
                    .setBrokerId(Integer.parseInt(f[1])).setHost("localhost").setPort(9092).setRack(rack(f[2])));
                case "BROKERS" -> brokerList = f[1];
                case "TOPIC" -> {
                    String topic = decode(f[1]);
                    topicOrder.add(topic);
                    List<TopicPartitionInfo> infos = new ArrayList<>();
                    for (int i = 2; i < f.length; i++) {
                        String[] pr = f[i].split(":", 2);
                        List<Node> replicas = ints(pr[1]).stream().map(r -> new Node(r, "localhost", 9092)).toList();
                        infos.add(new TopicPartitionInfo(Integer.parseInt(pr[0]),
                            replicas.isEmpty() ? null : replicas.get(0), replicas, replicas));
                    }
                    partitions.put(topic, infos);
                }
                default -> throw new IllegalArgumentException("bad GENERATE line: " + line);
            }
        }
        DescribeClusterResponseData data = new DescribeClusterResponseData();
        for (DescribeClusterResponseData.DescribeClusterBroker broker : brokers) data.brokers().add(broker);
        Collection<Node> nodes = new DescribeClusterResponse(data).nodes().values();

        StringBuilder json = new StringBuilder("{\"version\":1,\"topics\":[");
        for (int i = 0; i < topicOrder.size(); i++) {
            if (i > 0) json.append(',');
            json.append("{\"topic\":\"").append(jsonEscape(topicOrder.get(i))).append("\"}");
        }
        json.append("]}");

        reseedToolPlacer(seed);
        Admin admin = fakeAdmin(nodes, partitions);
        PrintStream savedOut = System.out;
        OUT.println("GENERATE " + id);
        try {
            System.setOut(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
            Map.Entry<Map<TopicPartition, List<Integer>>, Map<TopicPartition, List<Integer>>> result =
                ReassignPartitionsCommand.generateAssignment(admin, json.toString(), brokerList, rackAware);
            System.setOut(savedOut);
            result.getKey().entrySet().stream()
                .sorted(Comparator.comparing((Map.Entry<TopicPartition, List<Integer>> e) -> e.getKey().topic())
                    .thenComparingInt(e -> e.getKey().partition()))
                .forEach(e -> OUT.println("P " + e.getKey().topic() + " " + e.getKey().partition() + " "
                    + csv(e.getValue())));
        } catch (Throwable e) {
            System.setOut(savedOut);
            printError(e);
        }
        OUT.println("END");
    }

    private static String jsonEscape(String s) {
        StringBuilder sb = new StringBuilder();
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') sb.append('\\').append(c);
            else if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
            else sb.append(c);
        }
        return sb.toString();
    }

    /** The tool's placer is a private static final StripedReplicaPlacer(new Random()): reseed its Random. */
    private static void reseedToolPlacer(long seed) throws Exception {
        Field placerField = ReassignPartitionsCommand.class.getDeclaredField("REPLICA_PLACER");
        placerField.setAccessible(true);
        Object placer = placerField.get(null);
        Field randomField = StripedReplicaPlacer.class.getDeclaredField("random");
        randomField.setAccessible(true);
        ((Random) randomField.get(placer)).setSeed(seed);
    }

    @SuppressWarnings("unchecked")
    private static Admin fakeAdmin(Collection<Node> nodes, Map<String, List<TopicPartitionInfo>> partitions) {
        return (Admin) Proxy.newProxyInstance(Admin.class.getClassLoader(), new Class<?>[]{Admin.class},
            (proxy, method, args) -> {
                switch (method.getName()) {
                    case "describeCluster": {
                        Constructor<DescribeClusterResult> c = DescribeClusterResult.class.getDeclaredConstructor(
                            KafkaFuture.class, KafkaFuture.class, KafkaFuture.class, KafkaFuture.class);
                        c.setAccessible(true);
                        return c.newInstance(KafkaFuture.completedFuture(nodes), KafkaFuture.completedFuture(null),
                            KafkaFuture.completedFuture("oracle"), KafkaFuture.completedFuture(null));
                    }
                    case "describeTopics": {
                        Collection<String> topicNames = args[0] instanceof TopicCollection.TopicNameCollection
                            ? ((TopicCollection.TopicNameCollection) args[0]).topicNames()
                            : new ArrayList<>((Collection<String>) args[0]); // TopicCollection.ofTopicNames copies
                        // As KafkaAdminClient.handleDescribeTopicsByNamesWithDescribeTopicPartitionsApi:
                        Map<String, KafkaFuture<TopicDescription>> topicFutures = new HashMap<>(topicNames.size());
                        for (String topicName : topicNames) {
                            if (!topicFutures.containsKey(topicName)) {
                                List<TopicPartitionInfo> infos = partitions.get(topicName);
                                topicFutures.put(topicName, infos == null
                                    ? KafkaFuture.completedFuture(null)
                                    : KafkaFuture.completedFuture(new TopicDescription(topicName, false,
                                        new ArrayList<>(infos), null, Uuid.ZERO_UUID)));
                            }
                        }
                        Method of = DescribeTopicsResult.class.getDeclaredMethod("ofTopicNames", Map.class);
                        of.setAccessible(true);
                        return of.invoke(null, new HashMap<>(topicFutures));
                    }
                    case "describeReplicaLogDirs": {
                        Constructor<DescribeReplicaLogDirsResult> c =
                            DescribeReplicaLogDirsResult.class.getDeclaredConstructor(Map.class);
                        c.setAccessible(true);
                        return c.newInstance(new HashMap<>());
                    }
                    case "close":
                        return null;
                    case "hashCode":
                        return System.identityHashCode(proxy);
                    case "equals":
                        return proxy == args[0];
                    case "toString":
                        return "FakeAdmin";
                    default:
                        throw new UnsupportedOperationException(method.getName());
                }
            });
    }

    // ---------------------------------------------------------------------------------------------
    // PLACE: StripedReplicaPlacer on its own

    private static void place(String id, List<String> lines) {
        long seed = 0;
        List<UsableBroker> brokers = new ArrayList<>();
        List<int[]> specs = new ArrayList<>();
        for (String line : lines) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "SEED" -> seed = Long.parseLong(f[1]);
                case "BROKER" -> brokers.add(new UsableBroker(Integer.parseInt(f[1]),
                    Optional.ofNullable(rack(f[2])), f[3].equals("1")));
                case "SPEC" -> specs.add(new int[]{Integer.parseInt(f[1]), Integer.parseInt(f[2])});
                default -> throw new IllegalArgumentException("bad PLACE line: " + line);
            }
        }
        StripedReplicaPlacer placer = new StripedReplicaPlacer(new Random(seed));
        ClusterDescriber cluster = new ClusterDescriber() {
            @Override
            public Iterator<UsableBroker> usableBrokers() {
                return brokers.iterator();
            }

            @Override
            public Uuid defaultDir(int brokerId) {
                return Uuid.ZERO_UUID;
            }
        };
        OUT.println("PLACE " + id);
        for (int[] spec : specs) {
            OUT.println("S");
            try {
                TopicAssignment assignment = placer.place(new PlacementSpec(0, spec[0], (short) spec[1]), cluster);
                for (PartitionAssignment partition : assignment.assignments()) {
                    OUT.println("R " + csv(partition.replicas()));
                }
            } catch (Throwable e) {
                printError(e);
            }
        }
        OUT.println("END");
    }

    // ---------------------------------------------------------------------------------------------
    // HMAP: java.util.HashMap iteration order

    private static void hashMap(String id, List<String> lines) {
        String kind = "string";
        Map<Object, Boolean> map = new HashMap<>();
        HashSet<Object> set = null;
        boolean copyAtEnd = false;
        for (String line : lines) {
            String[] f = line.split(" ");
            switch (f[0]) {
                case "KIND" -> kind = f[1];
                case "CTOR" -> {
                    switch (f[1]) {
                        case "default" -> map = new HashMap<>();
                        case "cap" -> map = new HashMap<>(Integer.parseInt(f[2]));
                        case "copy" -> copyAtEnd = true;
                        case "hashset" -> set = new HashSet<>(keys(kind, f[2]));
                        default -> throw new IllegalArgumentException("bad CTOR " + f[1]);
                    }
                }
                case "PUT" -> {
                    if (set != null) set.add(key(kind, f[1]));
                    else map.put(key(kind, f[1]), Boolean.TRUE);
                }
                case "CIA" -> map.computeIfAbsent(key(kind, f[1]), k -> Boolean.TRUE);
                case "REMOVE" -> {
                    if (set != null) set.remove(key(kind, f[1]));
                    else map.remove(key(kind, f[1]));
                }
                case "REMOVEALL" -> {
                    List<Object> gone = keys(kind, f.length > 1 ? f[1] : "");
                    if (set != null) set.removeAll(gone);
                    else map.keySet().removeAll(gone);
                }
                default -> throw new IllegalArgumentException("bad HMAP line: " + line);
            }
        }
        if (copyAtEnd) map = new HashMap<>(map);
        OUT.println("HMAP " + id);
        for (Object k : set != null ? set : map.keySet()) OUT.println("K " + show(k));
        OUT.println("END");
    }

    private static List<Object> keys(String kind, String csv) {
        List<Object> keys = new ArrayList<>();
        if (!csv.isEmpty()) for (String k : csv.split(",")) keys.add(key(kind, k));
        return keys;
    }

    private static Object key(String kind, String text) {
        switch (kind) {
            case "string":
                return decode(text);
            case "int":
                return Integer.valueOf(text);
            case "tp": {
                int colon = text.lastIndexOf(':');
                return new TopicPartition(decode(text.substring(0, colon)), Integer.parseInt(text.substring(colon + 1)));
            }
            case "tpr": {
                String[] f = text.split(":");
                return new TopicPartitionReplica(decode(f[0]), Integer.parseInt(f[1]), Integer.parseInt(f[2]));
            }
            default:
                throw new IllegalArgumentException("bad KIND " + kind);
        }
    }

    private static String show(Object key) {
        if (key instanceof TopicPartition t) return URLEncoder.encode(t.topic(), StandardCharsets.UTF_8) + ":" + t.partition();
        if (key instanceof TopicPartitionReplica r)
            return URLEncoder.encode(r.topic(), StandardCharsets.UTF_8) + ":" + r.partition() + ":" + r.brokerId();
        return URLEncoder.encode(key.toString(), StandardCharsets.UTF_8);
    }
}
