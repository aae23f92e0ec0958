package io.lancecontext.core.internal.read;

import io.lancecontext.core.internal.lance.MergedWatermarks;
import java.util.Map;
import org.lance.Dataset;

/**
 * One version of the base table, opened, with the merged watermark of every shard at that version.
 * Shared by the reads that use it; closed when the last of them releases it.
 */
public final class BaseTable extends RefCounted {
  private final Dataset dataset;
  private final long version;
  private final Map<String, Long> watermarks;

  private BaseTable(Dataset dataset, Map<String, Long> watermarks) {
    this.dataset = dataset;
    this.version = dataset.version();
    this.watermarks = Map.copyOf(watermarks);
  }

  /** Takes ownership of {@code dataset} (closed if its watermarks cannot be read). */
  public static BaseTable of(Dataset dataset) {
    try {
      return new BaseTable(dataset, MergedWatermarks.read(dataset));
    } catch (RuntimeException e) {
      dataset.close();
      throw e;
    }
  }

  public Dataset dataset() {
    return dataset;
  }

  public long version() {
    return version;
  }

  /** The highest generation of {@code shardId} merged into this version (0 if none). */
  public long watermark(String shardId) {
    return watermarks.getOrDefault(shardId, 0L);
  }

  public Map<String, Long> watermarks() {
    return watermarks;
  }

  @Override
  protected void free() {
    dataset.close();
  }
}
