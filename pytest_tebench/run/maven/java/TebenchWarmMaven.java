// A warm Maven: one JVM with Apache Maven's lib/ on its class path that runs one build per request
// through MavenCli.doMain, each in its own Plexus container and class realms (pytest-tebench,
// run/maven/warm.py starts it, writes the requests and reads the answers; nothing else talks to it).
//
// Request on stdin, one field per line, no field may hold a line break (warm.py refuses those):
//   BEGIN <nonce>
//   CWD <working directory>
//   ENV <NAME>=<value>        (zero or more: set for this build only, seen by System.getenv and forks)
//   UNSET <NAME>              (zero or more)
//   PROP <name>=<value>       (zero or more: system properties the mvn script would pass)
//   ARG <argument>            (zero or more)
//   END
// Answer on stdout: the build's stdout and stderr, then the line "<nonce> EXIT <code>". After each
// build the system properties and environment are put back as they were, and a thread the build
// left running makes the server say "<nonce> DIRTY <names>" before EXIT and then exit: the caller
// starts a fresh one, so nothing of one build reaches the next.
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.maven.cli.MavenCli;
import org.codehaus.plexus.classworlds.ClassWorld;

public final class TebenchWarmMaven {
    private TebenchWarmMaven() {}

    /** Called by the plexus-classworlds launcher (our m2.conf names this class as main). */
    public static void main(String[] args, ClassWorld world) throws Exception {
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Set<Thread> baseline = null;
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.startsWith("BEGIN ")) {
                continue;
            }
            String nonce = line.substring(6);
            String cwd = null;
            Map<String, String> env = new HashMap<>();
            List<String> unset = new ArrayList<>();
            Map<String, String> props = new HashMap<>();
            List<String> argv = new ArrayList<>();
            while ((line = in.readLine()) != null && !line.equals("END")) {
                int space = line.indexOf(' ');
                String key = space < 0 ? line : line.substring(0, space);
                String value = space < 0 ? "" : line.substring(space + 1);
                if (key.equals("CWD")) {
                    cwd = value;
                } else if (key.equals("ARG")) {
                    argv.add(value);
                } else if (key.equals("UNSET")) {
                    unset.add(value);
                } else if (key.equals("ENV") || key.equals("PROP")) {
                    int eq = value.indexOf('=');
                    (key.equals("ENV") ? env : props).put(value.substring(0, eq), value.substring(eq + 1));
                }
            }
            if (line == null || cwd == null) {
                return;
            }
            if (baseline == null) {
                baseline = liveThreads();
            }
            int code = build(world, cwd, env, unset, props, argv.toArray(new String[0]), out);
            out.flush();
            List<String> left = leftovers(baseline);
            if (!left.isEmpty()) {
                out.println(nonce + " DIRTY " + String.join(",", left));
                out.println(nonce + " EXIT " + code);
                out.flush();
                System.exit(0);
            }
            out.println(nonce + " EXIT " + code);
            out.flush();
        }
    }

    private static int build(
            ClassWorld world,
            String cwd,
            Map<String, String> env,
            List<String> unset,
            Map<String, String> props,
            String[] argv,
            PrintStream out) {
        Properties saved = (Properties) System.getProperties().clone();
        Map<String, String> savedEnv = new HashMap<>(System.getenv());
        ClassLoader loader = Thread.currentThread().getContextClassLoader();
        try {
            Map<String, String> live = writableEnvironment();
            for (String name : unset) {
                live.remove(name);
            }
            live.putAll(env);
            for (Map.Entry<String, String> prop : props.entrySet()) {
                System.setProperty(prop.getKey(), prop.getValue());
            }
            System.setProperty("user.dir", cwd);
            return new MavenCli(world).doMain(argv, cwd, out, out);
        } catch (Throwable error) {
            error.printStackTrace(out);
            return 1;
        } finally {
            Thread.currentThread().setContextClassLoader(loader);
            System.setProperties(saved);
            try {
                Map<String, String> live = writableEnvironment();
                live.clear();
                live.putAll(savedEnv);
            } catch (ReflectiveOperationException error) {
                error.printStackTrace(out);
            }
        }
    }

    /**
     * The map behind System.getenv(), made writable: every ProcessBuilder starts from it, so a
     * build's forks (Surefire's test JVM) see the variables of its step (JAVA_TOOL_OPTIONS for
     * JaCoCo) as under a cold mvn. System.getenv() is an unmodifiable view of a StringEnvironment
     * that writes through to ProcessEnvironment's map; needs --add-opens java.base/java.util.
     */
    @SuppressWarnings("unchecked")
    private static Map<String, String> writableEnvironment() throws ReflectiveOperationException {
        Map<String, String> view = System.getenv();
        Field inner = view.getClass().getDeclaredField("m");
        inner.setAccessible(true);
        return (Map<String, String>) inner.get(view);
    }

    private static Set<Thread> liveThreads() {
        return new HashSet<>(Thread.getAllStackTraces().keySet());
    }

    /** Non-daemon threads started by the build that are still alive a moment after it returned. */
    private static List<String> leftovers(Set<Thread> baseline) throws InterruptedException {
        List<String> left = new ArrayList<>();
        for (int attempt = 0; attempt < 20; attempt++) {
            left.clear();
            for (Thread thread : liveThreads()) {
                if (!baseline.contains(thread) && thread.isAlive() && !thread.isDaemon()) {
                    left.add(thread.getName());
                }
            }
            if (left.isEmpty()) {
                return left;
            }
            Thread.sleep(100);
        }
        return left;
    }
}
