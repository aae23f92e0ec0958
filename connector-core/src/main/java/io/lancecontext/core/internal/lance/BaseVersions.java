package io.lancecontext.core.internal.lance;

import io.lancecontext.core.internal.io.StoreFiles;
import java.io.IOException;

/**
 * Detects a new base-table version without opening it: one existence check of the next version's manifest,
 * once the naming scheme of the table's manifests is known. Lance names manifests in one of two schemes
 * ({@code _versions/<u64::MAX - v>.manifest}, V2, or {@code _versions/<v>.manifest}, V1); a table keeps its
 * scheme unless it is migrated, so the scheme found for one version is remembered for the next. Until it is
 * known (and after a probe in the remembered scheme finds nothing, when {@link #forget()} is called by a
 * caller that reopened the table and found a newer version) both are probed. Thread-safe.
 */
public final class BaseVersions {
  private enum Naming {
    V2 {
      @Override
      String path(long version) {
        return "_versions/" + Long.toUnsignedString(~version) + ".manifest";
      }
    },
    V1 {
      @Override
      String path(long version) {
        return "_versions/" + version + ".manifest";
      }
    };

    abstract String path(long version);
  }

  private final StoreFiles files;
  private volatile Naming naming;

  public BaseVersions(StoreFiles files) {
    this.files = files;
  }

  /** Whether a manifest for {@code version} exists: one request once the scheme is known, else up to two. */
  public boolean exists(long version) throws IOException {
    Naming known = naming;
    if (known != null) {
      return files.objectExists(known.path(version));
    }
    return find(version);
  }

  /**
   * Learns the naming scheme from {@code version}, a version known to exist (the one just opened); does
   * nothing when the scheme is known.
   */
  public void learn(long version) throws IOException {
    if (naming == null) {
      find(version);
    }
  }

  /** Forgets the scheme (a reopened table had a version the remembered scheme did not find: migrated). */
  public void forget() {
    naming = null;
  }

  private boolean find(long version) throws IOException {
    for (Naming n : Naming.values()) {
      if (files.objectExists(n.path(version))) {
        naming = n;
        return true;
      }
    }
    return false;
  }
}
