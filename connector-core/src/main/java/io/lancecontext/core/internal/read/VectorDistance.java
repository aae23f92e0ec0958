package io.lancecontext.core.internal.read;

import io.lancecontext.core.schema.VectorMetric;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.complex.FixedSizeListVector;

/**
 * Exact distances between a query vector and the vectors of a batch, as lance-core computes them, so that
 * rows ranked here and rows ranked by its index merge into one order: L2 is the squared Euclidean distance,
 * cosine {@code 1 - cos}, dot {@code 1 - a·b}. Smaller is nearer.
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

  /** The distance of row {@code row} of {@code vectors}; NaN when it is null. */
  float of(FixedSizeListVector vectors, int row) {
    if (vectors.isNull(row)) {
      return Float.NaN;
    }
    ArrowBuf data = vectors.getDataVector().getDataBuffer();
    int dim = query.length;
    long at = (long) vectors.getElementStartIndex(row) * Float.BYTES;
    double sum = 0;
    if (metric == VectorMetric.L2) {
      for (int i = 0; i < dim; i++, at += Float.BYTES) {
        float d = data.getFloat(at) - query[i];
        sum += d * d;
      }
      return (float) sum;
    }
    double norm = 0;
    for (int i = 0; i < dim; i++, at += Float.BYTES) {
      float v = data.getFloat(at);
      sum += v * query[i];
      norm += v * v;
    }
    if (metric == VectorMetric.DOT) {
      return (float) (1 - sum);
    }
    return norm == 0 || queryNorm == 0 ? 1f : (float) (1 - sum / (Math.sqrt(norm) * queryNorm));
  }
}
