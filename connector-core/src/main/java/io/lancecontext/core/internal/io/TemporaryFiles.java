package io.lancecontext.core.internal.io;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The in-flight temporary files of {@link LocalStoreFiles}: {@code <name>.lc-tmp.<pid>.<host>.<nanos>}, written
 * and then moved over {@code <name>}. A writer killed between the two leaves its temporary behind, invisible
 * to listings; such an orphan is recognized by its name: written on this host (its kernel host name, a token
 * without dots) by a process that is no longer alive. A temporary of another host, of a live process, or named
 * by an older build (no host) is never an orphan: it may still be moved into place.
 */
final class TemporaryFiles {
  private static final String MARKER = ".lc-tmp.";
  /** This host's token, or null where the host name cannot be read (then nothing is an orphan). */
  private static final String HOST = hostToken();

  private TemporaryFiles() {}

  static boolean isTemporary(Path p) {
    return p.getFileName().toString().contains(MARKER);
  }

  /** A new temporary beside {@code target}, named by this process and host. */
  static Path temporaryFor(Path target) {
    return target.resolveSibling(target.getFileName() + MARKER + ProcessHandle.current().pid() + "."
        + (HOST == null ? "" : HOST + ".") + System.nanoTime());
  }

  /** Whether {@code p} is a temporary that this host's dead process left behind. */
  static boolean isOrphan(Path p) {
    String name = p.getFileName().toString();
    int at = name.lastIndexOf(MARKER);
    if (at < 0 || HOST == null) {
      return false;
    }
    String[] parts = name.substring(at + MARKER.length()).split("\\.");
    if (parts.length != 3 || !parts[1].equals(HOST)) {
      return false;
    }
    try {
      return ProcessHandle.of(Long.parseLong(parts[0])).map(h -> !h.isAlive()).orElse(true);
    } catch (NumberFormatException e) {
      return false;
    }
  }

  /** Deletes {@code p} if it is an orphan. */
  static void deleteIfOrphan(Path p) throws IOException {
    if (isOrphan(p)) {
      Files.deleteIfExists(p);
    }
  }

  /** Deletes the orphans in {@code dir}; nothing if {@code dir} is gone. */
  static void deleteOrphansIn(Path dir) throws IOException {
    try (DirectoryStream<Path> temporaries = Files.newDirectoryStream(dir, "*" + MARKER + "*")) {
      for (Path p : temporaries) {
        deleteIfOrphan(p);
      }
    } catch (NoSuchFileException | NotDirectoryException e) {
      // gone meanwhile: nothing left in it
    }
  }

  /** The kernel's host name (per container where containers have their own), hashed to hex; null if unreadable. */
  private static String hostToken() {
    String host = null;
    try {
      Path kernel = Paths.get("/proc/sys/kernel/hostname");
      if (Files.isReadable(kernel)) {
        host = Files.readString(kernel, StandardCharsets.UTF_8).trim();
      }
    } catch (IOException | RuntimeException e) {
      host = null;
    }
    if (host == null || host.isEmpty()) {
      host = System.getenv("HOSTNAME");
    }
    return host == null || host.isEmpty() ? null : Integer.toHexString(host.hashCode());
  }
}
