package io.lancecontext.core.internal.lance;

import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.lance.Dataset;
import org.lance.index.Index;

/**
 * The merged watermark of every shard: the highest generation whose rows the base table already holds.
 * lance-core 7.0.0 keeps it in the {@value #INDEX_NAME} index details (protobuf {@code Any} whose value
 * is MemWalIndexDetails; field 9 = repeated merged_generations {1 shard id {1: 16 bytes}, 2
 * generation}) and has no Java getter for it.
 */
public final class MergedWatermarks {
  private MergedWatermarks() {}

  public static final String INDEX_NAME = "__lance_mem_wal";

  /** Shard id → merged generation, for the dataset version the handle is at. */
  public static Map<String, Long> read(LanceDataset base) {
    return read(base.lance());
  }

  /** As {@link #read(LanceDataset)}, for a dataset opened with lance-core directly (tests, benchmarks). */
  public static Map<String, Long> read(Dataset base) {
    Map<String, Long> out = new HashMap<>();
    for (Index index : base.getIndexes()) {
      if (!INDEX_NAME.equals(index.name()) || index.indexDetails().isEmpty()) {
        continue;
      }
      for (Protobuf.Field any : Protobuf.parse(index.indexDetails().get())) {
        if (any.number() != 2) {
          continue;  // 1 = type_url
        }
        for (Protobuf.Field f : Protobuf.parse(any.bytes())) {
          if (f.number() != 9) {
            continue;
          }
          String shard = null;
          long generation = 0;
          for (Protobuf.Field g : Protobuf.parse(f.bytes())) {
            if (g.number() == 1) {
              shard = shardId(g.bytes());
            } else if (g.number() == 2) {
              generation = g.varint();
            }
          }
          if (shard != null) {
            out.merge(shard, generation, Math::max);
          }
        }
      }
    }
    return out;
  }

  private static String shardId(byte[] message) {
    for (Protobuf.Field f : Protobuf.parse(message)) {
      if (f.number() == 1 && f.bytes().length == 16) {
        byte[] b = f.bytes();
        long hi = 0;
        long lo = 0;
        for (int i = 0; i < 8; i++) {
          hi = hi << 8 | (b[i] & 0xff);
          lo = lo << 8 | (b[8 + i] & 0xff);
        }
        return new UUID(hi, lo).toString();
      }
    }
    return null;
  }
}
