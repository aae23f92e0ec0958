package io.lancecontext.core.schema;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Core's one parser of the per-column options both engines pass ({@code vector.<col>.*}, {@code blob.<col>}). */
class ColumnOptionsTest {
  private static final List<String> COLUMNS = List.of("id", "emb", "image");

  @Test
  void readsVectorsAndBlobsAndIgnoresOtherOptions() {
    ColumnOptions o = ColumnOptions.of(Map.of("vector.emb.dim", "3", "vector.emb.METRIC", "L2", "blob.image", "TRUE",
        "path", "/x"), COLUMNS);
    ColumnSpec emb = o.vector("emb", true, "array<float>").orElseThrow();
    assertEquals(3, emb.dim());
    assertEquals(VectorMetric.L2, emb.metric());
    assertTrue(o.blob("image", true, "binary"));
    assertFalse(o.blob("emb", false, "array<float>"));
    assertTrue(o.vector("image", false, "binary").isEmpty());
  }

  @Test
  void aTypoOrAnUndeclaredColumnOrABadValueFailsNamingTheOption() {
    for (var c : List.of(
        List.of("vector.emb.dimm", "3", "unknown option"),
        List.of("vector.nope.dim", "3", "names column 'nope'"),
        List.of("blob.nope", "true", "names column 'nope'"))) {
      BadOptionException e = assertThrows(BadOptionException.class, () -> ColumnOptions.of(Map.of(c.get(0), c.get(1)), COLUMNS));
      assertTrue(e.getMessage().contains(c.get(0)) && e.getMessage().contains(c.get(2)), e.getMessage());
    }
    for (var c : List.of(
        List.of("vector.emb.dim", "0", "positive integer"),
        List.of("vector.emb.metric", "l2", "set 'vector.emb.dim' too"))) {
      ColumnOptions o = ColumnOptions.of(Map.of(c.get(0), c.get(1)), COLUMNS);
      BadOptionException e = assertThrows(BadOptionException.class, () -> o.vector("emb", true, "array<float>"));
      assertTrue(e.getMessage().contains(c.get(0)) && e.getMessage().contains(c.get(2)), e.getMessage());
    }
    BadOptionException notFloats = assertThrows(BadOptionException.class,
        () -> ColumnOptions.of(Map.of("vector.emb.dim", "2"), COLUMNS).vector("emb", false, "array<double>"));
    assertTrue(notFloats.getMessage().contains("array<double>"), notFloats.getMessage());
    BadOptionException notBool = assertThrows(BadOptionException.class,
        () -> ColumnOptions.of(Map.of("blob.image", "yes"), COLUMNS).blob("image", true, "binary"));
    assertTrue(notBool.getMessage().contains("true or false"), notBool.getMessage());
  }

  @Test
  void optionsThatDisagreeWithAnExistingSpecFailNamingTheOption() {
    SchemaSpec spec = SchemaSpec.builder().idColumn().column(ColumnSpec.vector("emb", 4, VectorMetric.COSINE))
        .column(ColumnSpec.blob("image", ColumnType.LARGE_BINARY)).build();
    ColumnOptions.of(Map.of("vector.emb.dim", "4", "blob.image", "true"), COLUMNS).checkAgainst(spec);
    BadOptionException dim = assertThrows(BadOptionException.class,
        () -> ColumnOptions.of(Map.of("vector.emb.dim", "8"), COLUMNS).checkAgainst(spec));
    assertTrue(dim.getMessage().contains("has dim 4"), dim.getMessage());
    BadOptionException blob = assertThrows(BadOptionException.class,
        () -> ColumnOptions.of(Map.of("blob.image", "false"), COLUMNS).checkAgainst(spec));
    assertTrue(blob.getMessage().contains("is a blob"), blob.getMessage());
  }
}
