package io.lancecontext.core.internal.read;

import io.lancecontext.core.schema.VectorMetric;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.complex.FixedSizeListVector;

/**
 * Exact distances between a query vector and the vectors of a batch, as lance-core computes them, so that
 * rows ranked here and rows ranked by its index merge into one order: L2 is the squared Euclidean distance,
 * cosine {@code 1 - cos}, dot {@code 1 - a·b}. Smaller is nearer. Not thread-safe (it keeps a view of the last
 * batch).
 */
final class VectorDistance {
  private final VectorMetric metric;
  private final float[] query;
  private final double queryNorm;

  VectorDistance(VectorMetric metric, float[] query) {
    this.metric = metric == null ? VectorMetric.L2 : metric;
    this.query = query;
    double n = 0;
    for (float v : query) {
      n += (double) v * v;
    }
    this.queryNorm = Math.sqrt(n);
  }

  /** The batch whose values {@link #values} views, and that view. */
  private FixedSizeListVector bound;
  private FloatBuffer values;

  /** The distance of row {@code row} of {@code vectors}; NaN when it is null. */
  float of(FixedSizeListVector vectors, int row) {
    if (vectors.isNull(row)) {
      return Float.NaN;
    }
    if (vectors != bound) {
      // one view of the batch's values: ArrowBuf.getFloat checks bounds per call, most of a search's fresh-tier time
      ArrowBuf data = vectors.getDataVector().getDataBuffer();
      values = data.nioBuffer(0, (int) data.capacity()).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
      bound = vectors;
    }
    FloatBuffer v = values;
    int dim = query.length;
    int at = vectors.getElementStartIndex(row);
    double sum = 0;
    if (metric == VectorMetric.L2) {
      for (int i = 0; i < dim; i++) {
        float d = v.get(at + i) - query[i];
        sum += d * d;
      }
      return (float) sum;
    }
    double norm = 0;
    for (int i = 0; i < dim; i++) {
      float x = v.get(at + i);
      sum += x * query[i];
      norm += x * x;
    }
    if (metric == VectorMetric.DOT) {
      return (float) (1 - sum);
    }
    return norm == 0 || queryNorm == 0 ? 1f : (float) (1 - sum / (Math.sqrt(norm) * queryNorm));
  }
}
