package io.lancecontext.core.internal.io;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.options.StoreOptions;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Direct access to the objects lance-core keeps beside a dataset and exposes no Java API for (MemWAL shard
 * manifests, WAL entries, generation directories) and to lancecontext's own files (leases, the GC ledger),
 * on a local file system and on an object store alike.
 *
 * <p>The model is the object store's: a flat set of objects named by paths relative to the store root
 * ({@code "_mem_wal/<shard>/manifest/<v>.binpb"}, {@code '/'}-separated, no leading {@code '/'}). A
 * "directory" is only a prefix: it exists while an object exists below it, and it has no time of its own.
 * Ages must come from times the store records itself (an object's {@link Entry#storeTime()}, or a time
 * written into an object's contents such as a lease's expiry), never from directory times.
 *
 * <p>A missing object is always signalled by {@link NotFound} (or an empty {@link Optional}, -1 or
 * {@code false} where a method says so), never by a {@code java.nio} exception. Implementations are
 * thread-safe, and {@link #toString()} names the location, never a credential.
 */
public interface StoreFiles {

  /**
   * The object at a path does not exist. This is the one not-found signal of every implementation.
   */
  final class NotFound extends IOException {
    private static final long serialVersionUID = 1L;

    private final String path;

    public NotFound(String path) {
      super(path);
      this.path = path;
    }

    /** The missing path, relative to the store root. */
    public String path() {
      return path;
    }
  }

  /**
   * One object found by {@link #listPrefix}: its path relative to the store root, its size, and the time
   * the store recorded for it (local: the file's modification time; S3: {@code LastModified}, the time
   * the object's current version was written), empty where the store keeps none.
   */
  record Entry(String path, long size, Optional<Instant> storeTime) {
    public Entry {
      storeTime = storeTime == null ? Optional.empty() : storeTime;
    }

    /** The last path segment. */
    public String name() {
      return path.substring(path.lastIndexOf('/') + 1);
    }
  }

  // ---- reads

  /**
   * The whole object.
   *
   * @throws NotFound if it does not exist
   */
  byte[] read(String path) throws IOException;

  /** The whole object, or empty if it does not exist. */
  default Optional<byte[]> readIfPresent(String path) throws IOException {
    try {
      return Optional.of(read(path));
    } catch (NotFound e) {
      return Optional.empty();
    }
  }

  /**
   * Up to {@code length} bytes from {@code offset}: fewer if the object ends sooner, none if it ends at or
   * before {@code offset}.
   *
   * @throws NotFound if it does not exist
   * @throws IllegalArgumentException if {@code offset} or {@code length} is negative
   */
  byte[] readRange(String path, long offset, int length) throws IOException;

  /** The object's size and store time, or empty if it does not exist (one request on an object store). */
  Optional<Entry> stat(String path) throws IOException;

  /** Size in bytes, or -1 if the object does not exist. */
  default long size(String path) throws IOException {
    return stat(path).map(Entry::size).orElse(-1L);
  }

  /** Whether an object exists at {@code path} (a prefix is not an object); one request on an object store. */
  default boolean objectExists(String path) throws IOException {
    return stat(path).isPresent();
  }

  /**
   * Whether any object's path starts with {@code prefix} (a plain string prefix, as in {@link #listPrefix});
   * one request on an object store.
   */
  boolean prefixExists(String prefix) throws IOException;

  // ---- listings

  /**
   * Every object whose path starts with {@code prefix} (a plain string prefix: {@code "a/b"} matches
   * {@code "a/b/c"} and {@code "a/bc"}; {@code ""} lists the whole store), at any depth, sorted by path.
   * On S3 this pages through {@code ListObjectsV2}, 1,000 objects a request.
   */
  List<Entry> listPrefix(String prefix) throws IOException;

  /**
   * Names directly under the prefix {@code dir + "/"} (objects and sub-prefixes alike, without a trailing
   * {@code '/'}), sorted; empty if nothing is there.
   */
  List<String> list(String dir) throws IOException;

  /** Total bytes of the objects below {@code dir + "/"} (the whole store for {@code ""}); 0 if none. */
  default long totalBytes(String dir) throws IOException {
    long total = 0;
    for (Entry e : listPrefix(dir.isEmpty() ? "" : dir + "/")) {
      total += e.size();
    }
    return total;
  }

  // ---- writes

  /**
   * Creates the object only if it does not exist yet, atomically among every process that uses the store:
   * of racing callers exactly one gets {@code true}. Local: a hard link of a fully written temporary file
   * ({@code link(2)} fails on an existing target). S3: {@code PutObject} with {@code If-None-Match: *}; when a
   * retried request meets the object, the caller whose content it holds is the one that created it (an
   * earlier attempt's response was lost), so racing callers must write distinct contents (a lease names
   * its holder): two callers writing identical bytes may both be told they created it.
   *
   * @return false if it already existed (its content is unchanged)
   */
  boolean createIfAbsent(String path, byte[] content) throws IOException;

  /**
   * Creates or replaces the object; readers see the old or the new content, never a mix (used to renew
   * leases and rewrite the GC ledger). Last writer wins: it is no guard against a concurrent writer.
   */
  void overwrite(String path, byte[] content) throws IOException;

  /**
   * Makes {@code to} hold the content of the existing object {@code from}, without the data passing through
   * this JVM: local, a hard link (a copy where the file system has none; an existing {@code to} is left as
   * it is); S3, one server-side {@code CopyObject}. For immutable files under unique names only (Lance data
   * files), so an existing {@code to} already holds that content and a reader of either path sees all of it.
   */
  void copy(String from, String to) throws IOException;

  /** Deletes one object; an absent one is ignored. A prefix is not touched: see {@link #deletePrefix}. */
  void delete(String path) throws IOException;

  /**
   * Deletes these objects (absent ones are ignored), as {@link #delete} of each but in as few requests as the
   * store allows: on S3 one {@code DeleteObjects} per 1,000 paths.
   *
   * @return the number of paths given
   */
  default int deleteAll(Collection<String> paths) throws IOException {
    for (String p : paths) {
      delete(p);
    }
    return paths.size();
  }

  /**
   * Deletes every object whose path starts with {@code prefix} (a plain string prefix, as in
   * {@link #listPrefix}); objects created while it runs may survive.
   *
   * @return the number of objects deleted
   * @throws IllegalArgumentException if {@code prefix} is empty (the whole store)
   */
  int deletePrefix(String prefix) throws IOException;

  /**
   * Requests sent so far by the client behind this store, by operation name ({@code GetObject}, …),
   * retries included; shared by every store using the same client (S3: same endpoint and credentials).
   * Empty where no requests are counted (local files).
   */
  default Map<String, Long> requestCounts() {
    return Map.of();
  }

  // ---- opening

  /**
   * Opens the store at {@code uri} without storage options: a local path (or {@code file://} URI). An
   * object-store URI fails here as it does with options lacking its credentials.
   *
   * @throws BadOptionException if the location is invalid or needs storage options
   */
  static StoreFiles forUri(String uri) {
    return forUri(uri, Map.of());
  }

  /**
   * Opens the store at {@code uri} with the same storage options Lance gets (the {@code storage.*} keys
   * without the prefix): {@code s3://} (and {@code s3a://}) over the AWS SDK, local paths and
   * {@code file://} on the file system.
   *
   * @throws BadOptionException if the scheme is not supported or a required storage option is missing
   */
  static StoreFiles forUri(String uri, Map<String, String> storageOptions) {
    int sep = uri.indexOf("://");
    if (sep < 0) {
      return LocalStoreFiles.forPath(uri);
    }
    String scheme = uri.substring(0, sep).toLowerCase(Locale.ROOT);
    switch (scheme) {
      case "file":
        return LocalStoreFiles.forPath(uri.substring(sep + 3));
      case "s3":
      case "s3a":
        return S3StoreFiles.forUri(uri, storageOptions);
      case "gs":
        throw new BadOptionException(StoreOptions.PATH.key(), "stores on 'gs://' are not supported yet: "
            + "lancecontext reads MemWAL manifests and WAL entries itself and has no Google Cloud Storage client "
            + "(missing: a StoreFiles over the GCS JSON API with generation-match preconditions for create-if-absent, "
            + "configured from storage.google_service_account / storage.google_service_account_key)");
      case "az":
      case "abfs":
      case "abfss":
        throw new BadOptionException(StoreOptions.PATH.key(), "stores on '" + scheme + "://' are not supported yet: "
            + "lancecontext reads MemWAL manifests and WAL entries itself and has no Azure Blob Storage client "
            + "(missing: a StoreFiles over the Blob API with If-None-Match: * for create-if-absent, configured from "
            + "storage.azure_storage_account_name / storage.azure_storage_account_key)");
      default:
        throw new BadOptionException(StoreOptions.PATH.key(), "stores on '" + scheme + "://' are not supported: "
            + "use a local path, file:// or s3://");
    }
  }

  /** Paths of a listing's entries, for callers that need names only. */
  static List<String> paths(List<Entry> entries) {
    List<String> out = new ArrayList<>(entries.size());
    for (Entry e : entries) {
      out.add(e.path());
    }
    return out;
  }
}
