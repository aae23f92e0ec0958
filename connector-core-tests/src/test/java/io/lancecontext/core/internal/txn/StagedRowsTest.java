package io.lancecontext.core.internal.txn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lancecontext.core.testing.AllocatorExtension;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A part's kept rows answer part offsets from the batch that holds each, across batch boundaries. */
class StagedRowsTest {
  @RegisterExtension
  final AllocatorExtension arrow = new AllocatorExtension();

  @Test
  void offsetsAcrossBatchesReachTheRowsThatHoldThem() {
    List<VectorSchemaRoot> batches = new ArrayList<>();
    int value = 0;
    for (int size : new int[] {3, 0, 4, 2}) {  // an empty batch among them
      IntVector v = new IntVector("n", arrow.allocator());
      v.allocateNew(Math.max(size, 1));
      for (int r = 0; r < size; r++) {
        v.set(r, value++);
      }
      v.setValueCount(size);
      batches.add(VectorSchemaRoot.of(v));
    }
    try (StagedRows rows = StagedRows.moveFrom(batches, arrow.allocator())) {
      batches.forEach(VectorSchemaRoot::close);  // emptied: the caller's to close
      assertEquals(9, rows.rows());
      List<Integer> seen = new ArrayList<>();
      List<Integer> calls = new ArrayList<>();
      rows.forEachBatch(new int[] {0, 2, 3, 6, 7, 8}, (batch, local) -> {
        calls.add(local.length);
        IntVector n = (IntVector) batch.getVector("n");
        for (int r : local) {
          seen.add(n.get(r));
        }
      });
      assertEquals(List.of(0, 2, 3, 6, 7, 8), seen, "each part offset reads its own row");
      assertEquals(List.of(2, 2, 2), calls, "one call per batch holding any of the offsets");
      assertThrows(IllegalArgumentException.class, () -> rows.forEachBatch(new int[] {8, 9}, (b, l) -> { }));
    }
  }
}
