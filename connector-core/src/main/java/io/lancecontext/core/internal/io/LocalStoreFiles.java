package io.lancecontext.core.internal.io;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.options.StoreOptions;
import java.io.IOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** {@link StoreFiles} on a local or mounted file system. */
final class LocalStoreFiles implements StoreFiles {
  private final Path root;

  private LocalStoreFiles(Path root) {
    this.root = root;
  }

  static LocalStoreFiles forUri(String uri) {
    if (uri.contains("://")) {
      String scheme = uri.substring(0, uri.indexOf("://"));
      throw new BadOptionException(StoreOptions.PATH.key(), "stores on '" + scheme + "://' are not supported yet: "
          + "this release reads MemWAL manifests and WAL entries directly and supports local or mounted file systems");
    }
    try {
      return new LocalStoreFiles(Paths.get(uri));
    } catch (InvalidPathException e) {
      throw new BadOptionException(StoreOptions.PATH.key(), "'" + uri + "' is not a valid path: " + e.getReason());
    }
  }

  private Path resolve(String path) {
    return path.isEmpty() ? root : root.resolve(path);
  }

  @Override
  public List<String> list(String dir) throws IOException {
    Path d = resolve(dir);
    List<String> out = new ArrayList<>();
    try (DirectoryStream<Path> s = Files.newDirectoryStream(d)) {
      for (Path p : s) {
        out.add(p.getFileName().toString());
      }
    } catch (NoSuchFileException e) {
      return List.of();
    } catch (DirectoryIteratorException e) {
      throw e.getCause();
    }
    return out;
  }

  @Override
  public boolean exists(String path) {
    return Files.exists(resolve(path));
  }

  @Override
  public byte[] read(String path) throws IOException {
    return Files.readAllBytes(resolve(path));
  }

  @Override
  public long size(String path) throws IOException {
    try {
      return Files.size(resolve(path));
    } catch (NoSuchFileException e) {
      return -1;
    }
  }

  @Override
  public Instant modified(String path) throws IOException {
    try {
      return Files.getLastModifiedTime(resolve(path)).toInstant();
    } catch (NoSuchFileException e) {
      return null;
    }
  }

  @Override
  public boolean createExclusive(String path, byte[] content) throws IOException {
    Path target = resolve(path);
    Files.createDirectories(target.getParent());
    Path tmp = target.resolveSibling(target.getFileName() + ".tmp." + ProcessHandle.current().pid() + "." + System.nanoTime());
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
    Path tmp = target.resolveSibling(target.getFileName() + ".tmp." + ProcessHandle.current().pid() + "." + System.nanoTime());
    Files.write(tmp, content, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  @Override
  public void deleteRecursively(String path) throws IOException {
    walk(resolve(path), (file, attrs) -> Files.deleteIfExists(file), Files::deleteIfExists);
  }

  @Override
  public long totalBytes(String dir) throws IOException {
    long[] total = {0};
    walk(resolve(dir), (file, attrs) -> total[0] += attrs.isRegularFile() ? attrs.size() : 0, d -> {});
    return total[0];
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
