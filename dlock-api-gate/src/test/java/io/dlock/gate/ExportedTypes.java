package io.dlock.gate;

import java.io.IOException;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The packages a module exports (from its {@code module-info}, or given for a module without
 * one) and the top-level types in them, found in the module's jar or classes directory.
 */
final class ExportedTypes {

    private ExportedTypes() { }

    /**
     * @param anchor a class of the module
     * @param packagesWithoutModuleInfo the packages to count as exported when the module has no module-info
     * @return the exported packages, sorted
     */
    static Set<String> packages(Class<?> anchor, Set<String> packagesWithoutModuleInfo)
            throws IOException, URISyntaxException {
        Path location = location(anchor);
        Set<String> packages = new TreeSet<>(packagesWithoutModuleInfo);
        for (ModuleReference ref : ModuleFinder.of(location).findAll()) {
            ModuleDescriptor d = ref.descriptor();
            if (!d.isAutomatic()) {
                d.exports().stream().filter(e -> !e.isQualified()).forEach(e -> packages.add(e.source()));
            }
        }
        if (packages.isEmpty()) {
            throw new AssertionError(anchor.getName() + "'s module has neither a module-info nor gated packages");
        }
        return packages;
    }

    /**
     * @return the top-level classes of the exported packages (any visibility), sorted by name
     */
    static List<Class<?>> topLevel(Class<?> anchor, Set<String> packagesWithoutModuleInfo)
            throws IOException, URISyntaxException, ClassNotFoundException {
        Set<String> packages = packages(anchor, packagesWithoutModuleInfo);
        Set<String> names = new TreeSet<>();
        for (String entry : entries(location(anchor))) {
            if (!entry.endsWith(".class") || entry.contains("$") || entry.endsWith("module-info.class")
                    || entry.endsWith("package-info.class")) {
                continue;
            }
            String name = entry.substring(0, entry.length() - ".class".length()).replace('/', '.');
            if (packages.contains(name.substring(0, name.lastIndexOf('.')))) {
                names.add(name);
            }
        }
        List<Class<?>> types = new ArrayList<>();
        for (String name : names) {
            types.add(Class.forName(name, false, ExportedTypes.class.getClassLoader()));
        }
        return types;
    }

    private static Path location(Class<?> anchor) throws URISyntaxException {
        return Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    private static List<String> entries(Path location) throws IOException {
        List<String> names = new ArrayList<>();
        if (Files.isDirectory(location)) {
            try (Stream<Path> files = Files.walk(location)) {
                files.filter(Files::isRegularFile).forEach(f -> names.add(location.relativize(f).toString().replace('\\', '/')));
            }
        } else {
            try (JarFile jar = new JarFile(location.toFile())) {
                jar.stream().forEach(e -> names.add(e.getName()));
            }
        }
        return names;
    }
}
