// A forked javac JIT-compiles with C1 only: a Maven mojo-execution listener that lives in the warm
// server's core realm (pytest-tebench, run/maven/warm.py; a cold mvn never loads it).
//
// maven-compiler-plugin forks javac when the POM says <fork>true</fork> or a toolchain names the
// JDK (gson's Error Prone builds do both). Each fork is a fresh JVM that spends its few seconds
// compiling javac's own hot code with C2 on the same two cores as the compilation. With C1 only
// (-XX:TieredStopAtLevel=1) the same javac with the same arguments writes the same class files and
// the same messages, sooner: measured in one warm server, gson's production and test compiles
// with Error Prone 8.5-10.5 s and 16-19 s forked as configured, 5.6-6.6 s and 12.6-13.5 s with
// C1 only; commons-lang's forked 4.6-5.9 s and 11.9-13.6 s against 2.5-2.8 s and 9.8-10.7 s
// (docs/speed.md).
//
// How: before a javac compile mojo of maven-compiler-plugin 3.1+ executes (configured, not yet run),
// "-J-XX:TieredStopAtLevel=1" goes first into its compilerArgs. plexus-compiler-javac (every
// version 2.0-2.16 these plugins use) puts -J arguments only on a forked javac's command line,
// before the project's own -J arguments (the JVM takes the last of a repeated option, so the
// project's win), and leaves them out of an in-process compile and of the argument file. Any
// other compiler (compilerId other than javac, an executable that is not javac) or an older plugin
// without compilerArgs is left as configured; so is every mojo when anything here fails.
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;
import javax.inject.Named;
import javax.inject.Singleton;
import org.apache.maven.execution.MojoExecutionEvent;
import org.apache.maven.execution.MojoExecutionListener;
import org.apache.maven.plugin.MojoExecution;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

@Named("tebench-forked-javac")
@Singleton
public final class TebenchForkedJavac implements MojoExecutionListener {
    static final String FLAG = "-J-XX:TieredStopAtLevel=1";
    private static final Logger LOG = LoggerFactory.getLogger(TebenchForkedJavac.class);

    @Override
    public void beforeMojoExecution(MojoExecutionEvent event) {
        MojoExecution execution = event.getExecution();
        if (!"org.apache.maven.plugins".equals(execution.getGroupId())
                || !"maven-compiler-plugin".equals(execution.getArtifactId())) {
            return;
        }
        Object mojo = event.getMojo();
        try {
            Field args = field(mojo.getClass(), "compilerArgs");
            Field compilerId = field(mojo.getClass(), "compilerId");
            Field executable = field(mojo.getClass(), "executable");
            if (args == null || compilerId == null || !List.class.isAssignableFrom(args.getType())) {
                return;
            }
            if (!"javac".equals(compilerId.get(mojo))) {
                return;
            }
            Object tool = executable == null ? null : executable.get(mojo);
            if (tool != null && !String.valueOf(tool).matches("(?:.*[/\\\\])?javac(?:\\.exe)?")) {
                return;
            }
            @SuppressWarnings("unchecked")
            List<String> before = (List<String>) args.get(mojo);
            if (before != null && before.contains(FLAG)) {
                return;
            }
            List<String> now = new ArrayList<>();
            now.add(FLAG);
            if (before != null) {
                now.addAll(before);
            }
            args.set(mojo, now);
            LOG.debug("pytest-tebench: a forked javac of {} runs with {}", execution, FLAG);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            LOG.debug("pytest-tebench: {} left as configured: {}", execution, e.toString());
        }
    }

    @Override
    public void afterMojoExecutionSuccess(MojoExecutionEvent event) {}

    @Override
    public void afterExecutionFailure(MojoExecutionEvent event) {}

    /** The field ``name`` of ``type`` or of a class it extends, made accessible; null when none. */
    private static Field field(Class<?> type, String name) {
        for (Class<?> at = type; at != null; at = at.getSuperclass()) {
            try {
                Field found = at.getDeclaredField(name);
                found.setAccessible(true);
                return found;
            } catch (NoSuchFieldException e) {
                // look in the class it extends
            }
        }
        return null;
    }
}
