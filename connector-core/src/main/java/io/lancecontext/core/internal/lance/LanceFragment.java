package io.lancecontext.core.internal.lance;

import java.util.Objects;
import org.lance.FragmentMetadata;
import org.lance.fragment.DataFile;
import org.lance.fragment.DeletionFile;

/** One fragment of a dataset version, as its metadata describes it (no I/O). */
public final class LanceFragment {
  private final FragmentMetadata metadata;

  LanceFragment(FragmentMetadata metadata) {
    this.metadata = Objects.requireNonNull(metadata);
  }

  FragmentMetadata metadata() {
    return metadata;
  }

  public int id() {
    return metadata.getId();
  }

  /** Live rows (physical rows less deleted ones). */
  public long rows() {
    return metadata.getNumRows();
  }

  /** Rows in its data files, deleted ones included. */
  public long physicalRows() {
    return metadata.getPhysicalRows();
  }

  /** Rows its deletion file deletes. */
  public long deletedRows() {
    return metadata.getNumDeletions();
  }

  /** Bytes of its data files as its metadata records them (a size not recorded counts 0). */
  public long fileBytes() {
    long bytes = 0;
    for (DataFile file : metadata.getFiles()) {
      Long size = file.getFileSizeBytes();
      bytes += size == null ? 0 : size;
    }
    return bytes;
  }

  /**
   * What names the fragment's live rows: its first data file (Lance never rewrites a data file; a
   * compaction writes new fragments) and its deletion file (a fragment with more deletions has another).
   */
  public String identity() {
    DeletionFile d = metadata.getDeletionFile();
    return metadata.getFiles().get(0).getPath() + (d == null ? "" : "#" + d.getReadVersion() + "-" + d.getId());
  }

  /** Whether its rows have stable row ids: then a row's id is not its address (the store never asks for them). */
  public boolean stableRowIds() {
    return metadata.getRowIdMeta() != null;
  }

  /**
   * Its first data file: the same in two versions of the table only for the same fragment, whose rows may have
   * been deleted since (then the later version's deletion file is another), never rewritten.
   */
  public String dataFile() {
    return metadata.getFiles().get(0).getPath();
  }

  @Override
  public String toString() {
    return "fragment " + id();
  }
}
