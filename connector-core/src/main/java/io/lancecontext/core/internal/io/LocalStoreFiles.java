package io.lancecontext.core.internal.io;

import static io.lancecontext.core.internal.io.TemporaryFiles.isTemporary;
import static io.lancecontext.core.internal.io.TemporaryFiles.temporaryFor;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.options.StoreOptions;
import java.io.IOException;
import java.nio.channels.SeekableByteChannel;
import java.nio.ByteBuffer;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * {@link StoreFiles} on a local or mounted file system. Directories are created on demand and removed by
 * {@link #deletePrefix} once empty; in-flight temporary files ({@link TemporaryFiles}) never appear in
 * listings, and those a killed writer left behind are deleted by {@link #deleteAll} (in the directories it
 * deletes in) and {@link #deletePrefix}. Store times are the files' modification times (a file is written
 * once, or replaced whole by {@link #overwrite}); directories' times are never reported.
 */
final class LocalStoreFiles implements StoreFiles {
  private final Path root;

  private LocalStoreFiles(Path root) {
    this.root = root;
  }

  static LocalStoreFiles forPath(String path) {
    try {
      return new LocalStoreFiles(Paths.get(path));
    } catch (InvalidPathException e) {
      throw new BadOptionException(StoreOptions.PATH.key(), "'" + path + "' is not a valid path: " + e.getReason());
    }
  }

  private Path resolve(String path) {
    return path.isEmpty() ? root : root.resolve(path);
  }

  private String relative(Path file) {
    return root.relativize(file).toString().replace(java.io.File.separatorChar, '/');
  }

  @Override
  public byte[] read(String path) throws IOException {
    try {
      return Files.readAllBytes(resolve(path));
    } catch (NoSuchFileException e) {
      throw new NotFound(path);
    }
  }

  @Override
  public byte[] readRange(String path, long offset, int length) throws IOException {
    if (offset < 0 || length < 0) {
      throw new IllegalArgumentException("offset " + offset + " and length " + length + " must not be negative");
    }
    try (SeekableByteChannel ch = Files.newByteChannel(resolve(path), StandardOpenOption.READ)) {
      long size = ch.size();
      int n = (int) Math.max(0, Math.min(length, size - offset));
      ByteBuffer buf = ByteBuffer.allocate(n);
      ch.position(Math.min(offset, size));
      while (buf.hasRemaining() && ch.read(buf) >= 0) {
        // read until the range is full or the file ends (it may have been replaced meanwhile)
      }
      return buf.position() == n ? buf.array() : Arrays.copyOf(buf.array(), buf.position());
    } catch (NoSuchFileException e) {
      throw new NotFound(path);
    }
  }

  @Override
  public Optional<Entry> stat(String path) throws IOException {
    try {
      BasicFileAttributes a = Files.readAttributes(resolve(path), BasicFileAttributes.class);
      if (!a.isRegularFile()) {
        return Optional.empty();
      }
      return Optional.of(new Entry(path, a.size(), Optional.of(a.lastModifiedTime().toInstant())));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
  }

  @Override
  public boolean objectExists(String path) {
    return Files.isRegularFile(resolve(path));
  }

  @Override
  public boolean prefixExists(String prefix) throws IOException {
    if (prefix.endsWith("/")) {
      Path dir = resolve(prefix.substring(0, prefix.length() - 1));
      try (java.util.stream.Stream<Path> all = Files.walk(dir)) {
        return all.anyMatch(p -> Files.isRegularFile(p) && !isTemporary(p));
      } catch (NoSuchFileException | java.io.UncheckedIOException e) {
        return !listPrefix(prefix).isEmpty();  // vanished or changed while walked: the careful walk decides
      }
    }
    return !listPrefix(prefix).isEmpty();
  }

  @Override
  public List<Entry> listPrefix(String prefix) throws IOException {
    int slash = prefix.lastIndexOf('/');
    Path base = resolve(slash < 0 ? "" : prefix.substring(0, slash));
    List<Entry> out = new ArrayList<>();
    walk(base, (file, attrs) -> {
      if (attrs.isRegularFile() && !isTemporary(file)) {
        String rel = relative(file);
        if (rel.startsWith(prefix)) {
          out.add(new Entry(rel, attrs.size(), Optional.of(attrs.lastModifiedTime().toInstant())));
        }
      }
    }, d -> {});
    out.sort(Comparator.comparing(Entry::path));
    return out;
  }

  @Override
  public List<String> list(String dir) throws IOException {
    Path d = resolve(dir);
    List<String> out = new ArrayList<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(d)) {
      for (Path p : s) {
        if (!isTemporary(p)) {
          out.add(p.getFileName().toString());
        }
      }
    } catch (NoSuchFileException | NotDirectoryException e) {
      return List.of();
    } catch (DirectoryIteratorException e) {
      throw e.getCause();
    }
    out.sort(null);
    return out;
  }

  @Override
  public long totalBytes(String dir) throws IOException {
    long[] total = {0};
    walk(resolve(dir), (file, attrs) -> total[0] += attrs.isRegularFile() ? attrs.size() : 0, d -> {});
    return total[0];
  }

  @Override
  public boolean createIfAbsent(String path, byte[] content) throws IOException {
    Path target = resolve(path);
    Files.createDirectories(target.getParent());
    Path tmp = temporaryFor(target);
    Files.write(tmp, content, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    try {
      Files.createLink(target, tmp);  // link(2) fails if the target exists: put-if-not-exists
      return true;
    } catch (FileAlreadyExistsException e) {
      return false;
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  @Override
  public void overwrite(String path, byte[] content) throws IOException {
    Path target = resolve(path);
    Files.createDirectories(target.getParent());
    Path tmp = temporaryFor(target);
    Files.write(tmp, content, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  @Override
  public void copy(String from, String to) throws IOException {
    Path source = resolve(from);
    Path target = resolve(to);
    Files.createDirectories(target.getParent());
    try {
      Files.createLink(target, source);
    } catch (FileAlreadyExistsException e) {
      // a previous attempt's link or copy of the same immutable file
    } catch (NoSuchFileException e) {
      throw new NotFound(from);
    } catch (UnsupportedOperationException | java.nio.file.FileSystemException e) {
      Path tmp = temporaryFor(target);  // no hard links here (another device): copy, then move into place
      Files.copy(source, tmp);
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
  }

  @Override
  public void delete(String path) throws IOException {
    Path p = resolve(path);
    if (!Files.isDirectory(p)) {
      Files.deleteIfExists(p);
    }
  }

  /** As {@link StoreFiles#deleteAll}, and then the orphaned temporaries of the directories it deleted in. */
  @Override
  public int deleteAll(Collection<String> paths) throws IOException {
    Set<Path> dirs = new LinkedHashSet<>();
    for (String p : paths) {
      delete(p);
      dirs.add(resolve(p).getParent());
    }
    for (Path dir : dirs) {
      TemporaryFiles.deleteOrphansIn(dir);
    }
    return paths.size();
  }

  @Override
  public int deletePrefix(String prefix) throws IOException {
    if (prefix.isEmpty()) {
      throw new IllegalArgumentException("refusing to delete the whole store");
    }
    int slash = prefix.lastIndexOf('/');
    Path base = resolve(slash < 0 ? "" : prefix.substring(0, slash));
    int[] deleted = {0};
    walk(base, (file, attrs) -> {
      if (!relative(file).startsWith(prefix)) {
        return;
      }
      if (isTemporary(file)) {
        TemporaryFiles.deleteIfOrphan(file);  // a dead writer's would keep the directory forever
      } else if (Files.deleteIfExists(file)) {
        deleted[0]++;
      }
    }, dir -> {
      if (!dir.equals(root) && (relative(dir) + "/").startsWith(prefix)) {
        try {
          Files.deleteIfExists(dir);
        } catch (DirectoryNotEmptyException e) {
          // an object was created below it meanwhile: it stays, and so does its directory
        }
      }
    });
    return deleted[0];
  }

  @Override
  public String toString() {
    return "LocalStoreFiles[" + root + "]";
  }

  private interface FileAction {
    void apply(Path file, BasicFileAttributes attrs) throws IOException;
  }

  private interface DirAction {
    void apply(Path dir) throws IOException;
  }

  /**
   * Visits the files below {@code root} (then each directory, after its content), passing over entries
   * that vanish while the walk runs: garbage collection deletes while readers collect stats.
   */
  private static void walk(Path root, FileAction onFile, DirAction afterDir) throws IOException {
    if (!Files.exists(root)) {
      return;
    }
    Files.walkFileTree(root, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        onFile.apply(file, attrs);
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
        if (e instanceof NoSuchFileException) {
          return FileVisitResult.CONTINUE;
        }
        throw e;
      }

      @Override
      public FileVisitResult postVisitDirectory(Path dir, IOException e) throws IOException {
        if (e != null && !(e instanceof NoSuchFileException)) {
          throw e;
        }
        afterDir.apply(dir);
        return FileVisitResult.CONTINUE;
      }
    });
  }
}
