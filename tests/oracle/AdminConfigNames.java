// Prints every property name of the Java admin client (AdminClientConfig's ConfigDef), one a line, sorted:
// tests/unit/test_admin_properties.py compares them with kreassign's table of what it does with each.
import java.util.TreeSet;

import org.apache.kafka.clients.admin.AdminClientConfig;

public class AdminConfigNames {
    public static void main(String[] args) {
        for (String name : new TreeSet<>(AdminClientConfig.configNames())) {
            System.out.println(name);
        }
    }
}
