// A Kerberos KDC for the secure test cluster: Apache Kerby's SimpleKdcServer (the KDC of Kafka's own MiniKdc),
// run as a single-file Java program: java -cp <kerby jars> Kdc.java <work dir> <realm> <tcp port>
// It serves on 127.0.0.1:<tcp port> (TCP only) and then takes one command per line on standard input:
//   principal <name> <keytab file>          create <name> with a random key, export its keytab
//   delete <name>                           delete <name> (its keytab then names an unknown principal)
//   ccache <name> <keytab> <file> <seconds> log in from the keytab, store the ticket in a FILE: cache
// answering "ok" or "error <text>" on a line. It ends when standard input closes.
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;

import org.apache.kerby.KOptions;
import org.apache.kerby.kerberos.kerb.client.KrbClient;
import org.apache.kerby.kerberos.kerb.client.KrbOption;
import org.apache.kerby.kerberos.kerb.server.SimpleKdcServer;
import org.apache.kerby.kerberos.kerb.type.ticket.TgtTicket;

public class Kdc {
    public static void main(String[] args) throws Exception {
        File work = new File(args[0]);
        String realm = args[1];
        int port = Integer.parseInt(args[2]);
        SimpleKdcServer kdc = new SimpleKdcServer();
        kdc.setWorkDir(work);
        kdc.setKdcRealm(realm);
        kdc.setKdcHost("127.0.0.1");
        kdc.setAllowUdp(false);
        kdc.setAllowTcp(true);
        kdc.setKdcTcpPort(port);
        kdc.init();
        kdc.start();
        KrbClient client = kdc.getKrbClient();
        System.out.println("ready");
        System.out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            try {
                if (w[0].equals("principal")) {
                    kdc.createPrincipal(w[1]);
                    kdc.exportPrincipal(w[1], new File(w[2]));
                } else if (w[0].equals("delete")) {
                    kdc.deletePrincipal(w[1]);
                } else if (w[0].equals("ccache")) {
                    KOptions options = new KOptions();
                    options.add(KrbOption.CLIENT_PRINCIPAL, w[1]);
                    options.add(KrbOption.USE_KEYTAB, true);
                    options.add(KrbOption.KEYTAB_FILE, new File(w[2]));
                    options.add(KrbOption.LIFE_TIME, Integer.parseInt(w[4]));
                    TgtTicket tgt = client.requestTgt(options);
                    client.storeTicket(tgt, new File(w[3]));
                } else {
                    throw new IllegalArgumentException("unknown command " + w[0]);
                }
                System.out.println("ok");
            } catch (Exception e) {
                System.out.println("error " + String.valueOf(e).replace('\n', ' '));
            }
            System.out.flush();
        }
        kdc.stop();
    }
}
