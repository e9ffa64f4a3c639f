// The production build's manifest written once: a Maven lifecycle participant that lives in the
// warm server's core realm (pytest-tebench, run/maven/prebuilt.py switches it on with -D options;
// a cold mvn never loads it and runs every mojo as before).
//
// -Dtebench.outputs=store (the production launch, `mvn compile`): in each project whose
// process-classes phase holds only mojos named by -Dtebench.outputs.mojos (pure writers of the
// production tree: maven-bundle-plugin's manifest, bnd's bnd-process), the launch goes on to
// process-classes; the other projects' process-classes executions are left out of this launch, so
// their classes stay as `compile` left them. What those mojos wrote is compared before and after
// (every file of the checkout, the project's properties, resources and source
// roots, the system properties): when they only wrote files under target/, the list of those files
// is kept in target/tebench-stored-outputs.txt, and the production tree is stored with them.
//
// -Dtebench.outputs=replay (every launch on a restored production tree): a project with that list
// and the same process-classes executions in its plan does not run them again; the files they
// wrote, as stored, are written back where the first mojo after them starts (or at the project's
// end), so every later mojo and the tests see what the mojos would have written. The list itself
// is removed before any mojo runs. The switches are removed from the user and system properties,
// so the build (and Surefire, which hands user properties to the test JVM) never sees them.
//
// -Dtebench.testside=snapshot (gold's first test launch, `mvn test` on a restored production
// tree, run/maven/prebuilt_tests.py): each project's test side, as the test-compile phase left it
// (target/test-classes, target/generated-test-sources, the compiler's testCompile state), is
// copied to target/tebench-test-side/ before the project's first mojo of a later phase starts (or
// at the project's end), and target/tebench-test-side/done is written last; the launch goes on to
// the tests. So the tree a separate `mvn test-compile` would have left is kept without that launch.
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import javax.inject.Inject;
import javax.inject.Named;
import javax.inject.Singleton;
import org.apache.maven.AbstractMavenLifecycleParticipant;
import org.apache.maven.execution.ExecutionEvent;
import org.apache.maven.execution.ExecutionListener;
import org.apache.maven.execution.MavenSession;
import org.apache.maven.lifecycle.LifecycleExecutor;
import org.apache.maven.model.Plugin;
import org.apache.maven.model.PluginExecution;
import org.apache.maven.model.Resource;
import org.apache.maven.plugin.MojoExecution;
import org.apache.maven.project.MavenProject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

@Named("tebench-stored-outputs")
@Singleton
public final class TebenchStoredOutputs extends AbstractMavenLifecycleParticipant {
    static final String MODE = "tebench.outputs";
    static final String MOJOS = "tebench.outputs.mojos";
    static final String RECORD = "tebench-stored-outputs.txt";
    static final String PHASE = "process-classes";
    static final String TEST_SIDE_MODE = "tebench.testside";
    static final String SNAPSHOT = "tebench-test-side";
    /** A module's test side under its basedir, as prebuilt_tests.TEST_SIDE names it. */
    static final List<String> TEST_SIDE = Arrays.asList(
            "target/test-classes", "target/generated-test-sources", "target/maven-status/maven-compiler-plugin/testCompile");
    /** The default lifecycle's phases up to test-compile: a mojo of any other starts after it. */
    static final Set<String> UP_TO_TEST_COMPILE = new HashSet<>(Arrays.asList(
            "validate", "initialize", "generate-sources", "process-sources", "generate-resources",
            "process-resources", "compile", "process-classes", "generate-test-sources", "process-test-sources",
            "generate-test-resources", "process-test-resources", "test-compile"));
    private static final Logger LOG = LoggerFactory.getLogger(TebenchStoredOutputs.class);

    private final LifecycleExecutor lifecycle;

    @Inject
    public TebenchStoredOutputs(LifecycleExecutor lifecycle) {
        this.lifecycle = lifecycle;
    }

    @Override
    public void afterProjectsRead(MavenSession session) {
        Properties user = session.getUserProperties();
        String mode = user.getProperty(MODE);
        String mojos = user.getProperty(MOJOS, "");
        String testSide = user.getProperty(TEST_SIDE_MODE);
        user.remove(MODE);
        user.remove(MOJOS);
        user.remove(TEST_SIDE_MODE);
        System.clearProperty(MODE);
        System.clearProperty(MOJOS);
        System.clearProperty(TEST_SIDE_MODE);
        if ("snapshot".equals(testSide)) {
            session.getRequest().setExecutionListener(new Snapshotting(session.getRequest().getExecutionListener()));
        }
        if (mode == null) {
            return;
        }
        // whatever goes wrong here, the launch runs every mojo, as a cold mvn would
        try {
            if (mode.equals("store")) {
                store(session, new HashSet<>(Arrays.asList(mojos.split(","))));
            } else if (mode.equals("replay")) {
                replay(session);
            }
        } catch (Exception error) {
            LOG.warn("pytest-tebench: stored outputs not used ({}); every mojo runs", error.toString());
        }
    }

    /** The production launch: on to process-classes where only allowed mojos run there. */
    private void store(MavenSession session, Set<String> allowed) throws Exception {
        if (!session.getGoals().equals(Collections.singletonList("compile"))) {
            return;
        }
        Map<String, Stored> kept = new LinkedHashMap<>();
        List<Runnable> removals = new ArrayList<>();
        for (MavenProject project : session.getProjects()) {
            List<MojoExecution> phase = inPhase(plan(session, project, "process-classes"));
            if (phase.isEmpty()) {
                continue;
            }
            boolean pure = true;
            for (MojoExecution execution : phase) {
                pure &= allowed.contains(mojo(execution));
            }
            if (pure) {
                kept.put(id(project), new Stored(project, root(session, project), phase));
            } else {
                for (MojoExecution execution : phase) {
                    removals.add(removal(project, execution));
                }
            }
        }
        if (kept.isEmpty()) {
            return;
        }
        for (Runnable removal : removals) {
            removal.run();
        }
        session.getRequest().setGoals(new ArrayList<>(Collections.singletonList("process-classes")));
        session.getRequest().setExecutionListener(new Recording(session.getRequest().getExecutionListener(), kept));
    }

    /** A launch on a restored production tree: stored outputs written back, their mojos not run. */
    private void replay(MavenSession session) throws Exception {
        Map<String, Replayed> pending = new LinkedHashMap<>();
        List<Runnable> removals = new ArrayList<>();
        String[] goals = session.getGoals().toArray(new String[0]);
        for (MavenProject project : session.getProjects()) {
            File record = new File(project.getBuild().getDirectory(), RECORD);
            if (!record.isFile()) {
                continue;
            }
            List<String> lines = Files.readAllLines(record.toPath(), StandardCharsets.UTF_8);
            Files.delete(record.toPath());
            Set<String> executions = new TreeSet<>();
            for (String line : lines) {
                if (line.startsWith("execution ")) {
                    executions.add(line.substring(10));
                }
            }
            List<MojoExecution> plan = plan(session, project, goals);
            List<MojoExecution> phase = inPhase(plan);
            Set<String> planned = keys(phase);
            if (phase.isEmpty() || !planned.equals(executions)) {
                if (!phase.isEmpty()) {
                    LOG.info("pytest-tebench: {} runs, its plan is not the stored one", planned);
                }
                continue;
            }
            Map<String, byte[]> files = new TreeMap<>();
            for (String line : lines) {
                if (line.startsWith("file ")) {
                    String name = line.substring(5);
                    files.put(name, Files.readAllBytes(new File(project.getBuild().getDirectory(), name).toPath()));
                }
            }
            int last = plan.indexOf(phase.get(phase.size() - 1));
            String next = last + 1 < plan.size() ? key(plan.get(last + 1)) : null;
            for (MojoExecution execution : phase) {
                removals.add(removal(project, execution));
            }
            pending.put(id(project), new Replayed(project, next, files, planned));
        }
        if (pending.isEmpty()) {
            return;
        }
        for (Runnable removal : removals) {
            removal.run();
        }
        session.getRequest().setExecutionListener(new Replaying(session.getRequest().getExecutionListener(), pending));
    }

    private List<MojoExecution> plan(MavenSession session, MavenProject project, String... tasks) throws Exception {
        MavenProject current = session.getCurrentProject();
        try {
            session.setCurrentProject(project);
            return lifecycle.calculateExecutionPlan(session, false, tasks).getMojoExecutions();
        } finally {
            session.setCurrentProject(current);
        }
    }

    private static List<MojoExecution> inPhase(List<MojoExecution> plan) {
        List<MojoExecution> found = new ArrayList<>();
        for (MojoExecution execution : plan) {
            if (PHASE.equals(execution.getLifecyclePhase())) {
                found.add(execution);
            }
        }
        return found;
    }

    /** Takes the execution's goal out of the project's model (found now, removed on run()). */
    private static Runnable removal(MavenProject project, MojoExecution execution) {
        Plugin plugin = project.getBuild().getPluginsAsMap().get(execution.getPlugin().getKey());
        PluginExecution model = plugin == null ? null : plugin.getExecutionsAsMap().get(execution.getExecutionId());
        if (model == null || !model.getGoals().contains(execution.getGoal())) {
            throw new IllegalStateException(key(execution) + " is not in the model of " + project.getId());
        }
        return () -> model.getGoals().remove(execution.getGoal());
    }

    static String mojo(MojoExecution execution) {
        return execution.getGroupId() + ":" + execution.getArtifactId() + ":" + execution.getGoal();
    }

    static String key(MojoExecution execution) {
        return mojo(execution) + "@" + execution.getExecutionId();
    }

    static Set<String> keys(List<MojoExecution> executions) {
        Set<String> found = new TreeSet<>();
        for (MojoExecution execution : executions) {
            found.add(key(execution));
        }
        return found;
    }

    /** The reactor's top directory (the module's own when it lies outside it). */
    static Path root(MavenSession session, MavenProject project) {
        MavenProject top = session.getTopLevelProject();
        Path module = project.getBasedir().toPath().toAbsolutePath();
        Path base = top == null ? module : top.getBasedir().toPath().toAbsolutePath();
        return module.startsWith(base) ? base : module;
    }

    static String id(MavenProject project) {
        return project.getBasedir().getAbsolutePath();
    }

    /** One project's process-classes executions in the production launch. */
    private static final class Stored {
        final MavenProject project;
        /** The top of the reactor: the whole checkout is compared, not only this module. */
        final Path root;
        final Set<String> executions;
        final String first;
        final String last;
        Map<String, String> before;
        String state;

        Stored(MavenProject project, Path root, List<MojoExecution> phase) {
            this.project = project;
            this.root = root;
            executions = keys(phase);
            first = key(phase.get(0));
            last = key(phase.get(phase.size() - 1));
        }
    }

    /** One project's stored outputs to write back, before ``next`` (null: at the project's end). */
    private static final class Replayed {
        final MavenProject project;
        final String next;
        final Map<String, byte[]> files;
        final Set<String> executions;
        boolean written;

        Replayed(MavenProject project, String next, Map<String, byte[]> files, Set<String> executions) {
            this.project = project;
            this.next = next;
            this.files = files;
            this.executions = executions;
        }

        void write() throws IOException {
            written = true;
            for (Map.Entry<String, byte[]> file : files.entrySet()) {
                Path path = new File(project.getBuild().getDirectory(), file.getKey()).toPath();
                Files.createDirectories(path.getParent());
                Files.write(path, file.getValue());
            }
            LOG.info("pytest-tebench: {} not run again, its stored output written back: {}", executions, files.keySet());
        }
    }

    /** Compares what the kept mojos did, and writes the record when they only wrote under target/. */
    private static final class Recording extends Delegating {
        private final Map<String, Stored> kept;

        Recording(ExecutionListener next, Map<String, Stored> kept) {
            super(next);
            this.kept = new ConcurrentHashMap<>(kept);
        }

        @Override
        public void mojoStarted(ExecutionEvent event) {
            Stored stored = kept.get(id(event.getProject()));
            if (stored != null && stored.first.equals(key(event.getMojoExecution())) && stored.before == null) {
                try {
                    stored.before = files(stored.root, stored.project);
                    stored.state = state(stored.project);
                } catch (IOException error) {
                    kept.remove(id(event.getProject()));
                }
            }
            super.mojoStarted(event);
        }

        @Override
        public void mojoSucceeded(ExecutionEvent event) {
            super.mojoSucceeded(event);
            Stored stored = kept.get(id(event.getProject()));
            if (stored == null || stored.before == null || !stored.last.equals(key(event.getMojoExecution()))) {
                return;
            }
            kept.remove(id(event.getProject()));
            try {
                String why = record(stored);
                if (!why.isEmpty()) {
                    LOG.info("pytest-tebench: {} will run in every launch: {}", stored.executions, why);
                }
            } catch (IOException error) {
                LOG.info("pytest-tebench: {} will run in every launch: {}", stored.executions, error.toString());
            }
        }

        private static String record(Stored stored) throws IOException {
            Path base = stored.root;
            Path target = new File(stored.project.getBuild().getDirectory()).toPath().toAbsolutePath();
            Map<String, String> after = files(stored.root, stored.project);
            if (!state(stored.project).equals(stored.state)) {
                return "it changed the project's properties, resources or source roots, or system properties";
            }
            List<String> written = new ArrayList<>();
            for (Map.Entry<String, String> file : after.entrySet()) {
                if (!file.getValue().equals(stored.before.get(file.getKey()))) {
                    Path path = base.resolve(file.getKey()).toAbsolutePath();
                    if (!path.startsWith(target) || path.equals(target)) {
                        return "it wrote " + file.getKey() + ", outside target/";
                    }
                    written.add(target.relativize(path).toString().replace(File.separatorChar, '/'));
                }
            }
            for (String name : stored.before.keySet()) {
                if (!after.containsKey(name)) {
                    return "it removed " + name;
                }
            }
            StringBuilder text = new StringBuilder();
            text.append("# written by pytest-tebench's warm Maven: these executions' outputs, not run again on this tree\n");
            for (String execution : stored.executions) {
                text.append("execution ").append(execution).append('\n');
            }
            for (String name : written) {
                text.append("file ").append(name).append('\n');
            }
            Files.write(target.resolve(RECORD), text.toString().getBytes(StandardCharsets.UTF_8));
            return "";
        }
    }

    /** Writes the stored outputs back where the skipped mojos would have run. */
    private static final class Replaying extends Delegating {
        private final Map<String, Replayed> pending;

        Replaying(ExecutionListener next, Map<String, Replayed> pending) {
            super(next);
            this.pending = new ConcurrentHashMap<>(pending);
        }

        @Override
        public void mojoStarted(ExecutionEvent event) {
            Replayed replayed = pending.get(id(event.getProject()));
            if (replayed != null && !replayed.written && key(event.getMojoExecution()).equals(replayed.next)) {
                writeBack(replayed);
            }
            super.mojoStarted(event);
        }

        @Override
        public void projectSucceeded(ExecutionEvent event) {
            Replayed replayed = pending.get(id(event.getProject()));
            if (replayed != null && !replayed.written && replayed.next == null) {
                writeBack(replayed);
            }
            super.projectSucceeded(event);
        }

        private static void writeBack(Replayed replayed) {
            try {
                replayed.write();
            } catch (IOException error) {
                // the build goes on without them and fails as it would without the mojo's output
                LOG.error("pytest-tebench: cannot write the stored outputs back: {}", error.toString());
            }
        }
    }

    /** Keeps each project's test side as the test-compile phase left it (see the head of the file). */
    private static final class Snapshotting extends Delegating {
        private final Set<String> taken = ConcurrentHashMap.newKeySet();

        Snapshotting(ExecutionListener next) {
            super(next);
        }

        @Override
        public void mojoStarted(ExecutionEvent event) {
            if (!UP_TO_TEST_COMPILE.contains(event.getMojoExecution().getLifecyclePhase())) {
                take(event.getProject());
            }
            super.mojoStarted(event);
        }

        @Override
        public void projectSucceeded(ExecutionEvent event) {
            take(event.getProject());
            super.projectSucceeded(event);
        }

        private void take(MavenProject project) {
            if (project == null || !taken.add(id(project))) {
                return;
            }
            Path base = project.getBasedir().toPath();
            Path out = base.resolve("target").resolve(SNAPSHOT);
            try {
                delete(out);
                if (!Files.isDirectory(base.resolve("target/test-classes"), LinkOption.NOFOLLOW_LINKS)) {
                    return;  // nothing compiled: no test side to keep
                }
                for (String side : TEST_SIDE) {
                    Path from = base.resolve(side);
                    if (Files.isDirectory(from, LinkOption.NOFOLLOW_LINKS)) {
                        copy(from, out.resolve(side.substring("target/".length())));
                    }
                }
                Files.write(out.resolve("done"), new byte[0]);
            } catch (IOException | RuntimeException error) {
                // no snapshot: the harness compiles the test tree in a launch of its own
                LOG.warn("pytest-tebench: the test side of {} is not kept: {}", project.getId(), error.toString());
                try {
                    delete(out);
                } catch (IOException ignored) {
                    // the missing marker says enough
                }
            }
        }

        /** A directory tree copied (links as links, times kept). */
        private static void copy(Path from, Path to) throws IOException {
            Files.walkFileTree(from, new SimpleFileVisitor<Path>() {
                @Override
                public FileVisitResult preVisitDirectory(Path directory, BasicFileAttributes attributes) throws IOException {
                    Files.createDirectories(to.resolve(from.relativize(directory).toString()));
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                    Files.copy(file, to.resolve(from.relativize(file).toString()),
                            StandardCopyOption.COPY_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
                    return FileVisitResult.CONTINUE;
                }
            });
        }

        private static void delete(Path root) throws IOException {
            if (!Files.exists(root, LinkOption.NOFOLLOW_LINKS)) {
                return;
            }
            Files.walkFileTree(root, new SimpleFileVisitor<Path>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                    Files.delete(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path directory, IOException error) throws IOException {
                    Files.delete(directory);
                    return FileVisitResult.CONTINUE;
                }
            });
        }
    }

    /**
     * Every file under ``base`` but .git (links not followed), by relative path:
     * its size and time, and under target/ (where the mojos may write: a rewrite there within the
     * file system's clock tick must show too) its CRC-32.
     */
    static Map<String, String> files(Path base, MavenProject project) throws IOException {
        Path target = new File(project.getBuild().getDirectory()).toPath().toAbsolutePath();
        Map<String, String> found = new HashMap<>();
        Files.walkFileTree(base, new SimpleFileVisitor<Path>() {
            @Override
            public FileVisitResult preVisitDirectory(Path directory, BasicFileAttributes attributes) {
                return directory.getFileName() != null && directory.getFileName().toString().equals(".git")
                        ? FileVisitResult.SKIP_SUBTREE
                        : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) throws IOException {
                CRC32 crc = new CRC32();
                if (attributes.isRegularFile() && file.toAbsolutePath().startsWith(target)) {
                    crc.update(Files.readAllBytes(file));
                }
                found.put(
                        base.relativize(file).toString(),
                        attributes.size() + " " + attributes.lastModifiedTime().to(TimeUnit.NANOSECONDS) + " "
                                + crc.getValue());
                return FileVisitResult.CONTINUE;
            }
        });
        return found;
    }

    /** What a mojo could change besides files, as text. */
    static String state(MavenProject project) {
        StringBuilder text = new StringBuilder();
        text.append(new TreeMap<>(project.getProperties())).append('\n');
        text.append(new TreeMap<>(System.getProperties())).append('\n');
        for (List<Resource> resources : Arrays.asList(project.getResources(), project.getTestResources())) {
            for (Resource resource : resources) {
                text.append(resource.getDirectory()).append(resource.getTargetPath()).append(resource.getFiltering())
                        .append(resource.getIncludes()).append(resource.getExcludes()).append('\n');
            }
        }
        text.append(project.getCompileSourceRoots()).append(project.getTestCompileSourceRoots()).append('\n');
        text.append(project.getArtifact().getFile()).append(project.getAttachedArtifacts().size()).append('\n');
        text.append(project.getBuild().getOutputDirectory()).append(project.getBuild().getDirectory());
        return text.toString();
    }

    /** Passes every event on to Maven's own listener (the console log). */
    private static class Delegating implements ExecutionListener {
        private final ExecutionListener next;

        Delegating(ExecutionListener next) {
            this.next = next;
        }

        @Override public void projectDiscoveryStarted(ExecutionEvent e) { if (next != null) next.projectDiscoveryStarted(e); }
        @Override public void sessionStarted(ExecutionEvent e) { if (next != null) next.sessionStarted(e); }
        @Override public void sessionEnded(ExecutionEvent e) { if (next != null) next.sessionEnded(e); }
        @Override public void projectSkipped(ExecutionEvent e) { if (next != null) next.projectSkipped(e); }
        @Override public void projectStarted(ExecutionEvent e) { if (next != null) next.projectStarted(e); }
        @Override public void projectSucceeded(ExecutionEvent e) { if (next != null) next.projectSucceeded(e); }
        @Override public void projectFailed(ExecutionEvent e) { if (next != null) next.projectFailed(e); }
        @Override public void mojoSkipped(ExecutionEvent e) { if (next != null) next.mojoSkipped(e); }
        @Override public void mojoStarted(ExecutionEvent e) { if (next != null) next.mojoStarted(e); }
        @Override public void mojoSucceeded(ExecutionEvent e) { if (next != null) next.mojoSucceeded(e); }
        @Override public void mojoFailed(ExecutionEvent e) { if (next != null) next.mojoFailed(e); }
        @Override public void forkStarted(ExecutionEvent e) { if (next != null) next.forkStarted(e); }
        @Override public void forkSucceeded(ExecutionEvent e) { if (next != null) next.forkSucceeded(e); }
        @Override public void forkFailed(ExecutionEvent e) { if (next != null) next.forkFailed(e); }
        @Override public void forkedProjectStarted(ExecutionEvent e) { if (next != null) next.forkedProjectStarted(e); }
        @Override public void forkedProjectSucceeded(ExecutionEvent e) { if (next != null) next.forkedProjectSucceeded(e); }
        @Override public void forkedProjectFailed(ExecutionEvent e) { if (next != null) next.forkedProjectFailed(e); }
    }
}
