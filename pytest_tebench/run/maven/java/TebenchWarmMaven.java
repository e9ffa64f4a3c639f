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
//   JACOCO <cli jar>          (optional: the ARGs are a JaCoCo command line, run in this JVM
//                              instead of a build: the coverage report, our tool, never the project's)
//   END
// Answer on stdout: the build's stdout and stderr, then the line "<nonce> EXIT <code>". After each
// build the system properties and environment are put back as they were, and a thread the build
// left running makes the server say "<nonce> DIRTY <names>" before EXIT and then exit: the caller
// starts a fresh one, so nothing of one build reaches the next.
import java.io.BufferedReader;
import java.io.File;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
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

    /** JaCoCo's CLI by jar: its classes load once, so its code stays JIT-compiled between reports. */
    private static final Map<String, ClassLoader> JACOCO = new HashMap<>();

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
            String jacoco = null;
            while ((line = in.readLine()) != null && !line.equals("END")) {
                int space = line.indexOf(' ');
                String key = space < 0 ? line : line.substring(0, space);
                String value = space < 0 ? "" : line.substring(space + 1);
                if (key.equals("CWD")) {
                    cwd = value;
                } else if (key.equals("ARG")) {
                    argv.add(value);
                } else if (key.equals("JACOCO")) {
                    jacoco = value;
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
            int code =
                    jacoco != null
                            ? jacoco(jacoco, argv.toArray(new String[0]), out)
                            : build(world, cwd, env, unset, props, argv.toArray(new String[0]), out);
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
     * JaCoCo's command line (org.jacoco.cli.internal.Main) on {@code argv}, as {@code java -jar}
     * runs it but without its System.exit: the same classes, the same arguments, the same files
     * written. Its class loader's parent is the platform's, so nothing of Maven is visible to it.
     */
    private static int jacoco(String jar, String[] argv, PrintStream out) {
        PrintWriter writer = new PrintWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8), true);
        try {
            ClassLoader loader = JACOCO.get(jar);
            if (loader == null) {
                loader = new URLClassLoader(new URL[] {new File(jar).toURI().toURL()}, platformLoader());
                JACOCO.put(jar, loader);
            }
            Class<?> main = Class.forName("org.jacoco.cli.internal.Main", true, loader);
            Constructor<?> command = main.getDeclaredConstructor(String[].class);
            command.setAccessible(true);
            Method execute = main.getMethod("execute", PrintWriter.class, PrintWriter.class);
            return (Integer) execute.invoke(command.newInstance((Object) argv), writer, writer);
        } catch (InvocationTargetException error) {
            error.getCause().printStackTrace(writer);
            return 1;
        } catch (Throwable error) {
            error.printStackTrace(writer);
            return 1;
        } finally {
            writer.flush();
        }
    }

    /** The platform class loader (Java 9+), else the bootstrap one (null). */
    private static ClassLoader platformLoader() {
        try {
            return (ClassLoader) ClassLoader.class.getMethod("getPlatformClassLoader").invoke(null);
        } catch (ReflectiveOperationException error) {
            return null;
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
