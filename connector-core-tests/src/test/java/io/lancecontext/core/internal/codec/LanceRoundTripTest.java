package io.lancecontext.core.internal.codec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.internal.lance.BatchesReader;
import io.lancecontext.core.internal.lance.BlobMaterializer;
import io.lancecontext.core.internal.lance.LanceDataset;
import io.lancecontext.core.schema.SchemaPresets;
import io.lancecontext.core.schema.SchemaSpec;
import io.lancecontext.core.testing.AllocatorExtension;
import io.lancecontext.core.testing.RandomRecords;
import io.lancecontext.core.testing.RecordAssertions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.lance.Dataset;
import org.lance.MetadataColumns;
import org.lance.WriteParams;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/** Records → codec → Lance dataset on disk → codec, for every preset and every type, nulls included. */
class LanceRoundTripTest {
  @RegisterExtension
  final AllocatorExtension arrow = new AllocatorExtension();

  @TempDir
  Path dir;

  static Stream<Arguments> specs() {
    return Stream.of(
        Arguments.of("context", SchemaPresets.context(64), 0.3),
        Arguments.of("rollout", SchemaPresets.rollout(1536), 0.3),
        Arguments.of("datagen", SchemaPresets.datagen(64), 0.3),
        Arguments.of("rollout-null-heavy", SchemaPresets.rollout(16), 0.85),
        Arguments.of("all-types", RecordCodecTest.ALL_TYPES, 0.25));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("specs")
  void randomRecordsRoundTripLosslessly(String name, SchemaSpec spec, double nullShare) throws Exception {
    RecordCodec codec = new RecordCodec(spec);
    List<Map<String, Object>> records = new RandomRecords(spec, name.hashCode(), nullShare).next(1_200);
    String uri = dir.resolve(name).toString();
    write(codec, records, uri, WriteParams.WriteMode.CREATE);

    try (Dataset ds = Dataset.open(uri, arrow.allocator())) {
      assertEquals(spec, SchemaSpec.fromArrowSchema(ds.getSchema()).orElseThrow(), "spec persisted with the dataset");
      List<Map<String, Object>> read = readAll(ds, spec);
      Comparator<Map<String, Object>> byKey = Comparator.comparing(r -> (String) r.get(spec.key()));
      List<Map<String, Object>> expected = new ArrayList<>(records);
      expected.sort(byKey);
      read.sort(byKey);
      RecordAssertions.assertRecordsEqual(expected, read);
    }
  }

  @Test
  void persistedSpecJsonIsByteForByteTheSame() throws Exception {
    SchemaSpec spec = SchemaPresets.context(32);
    String uri = dir.resolve("persist").toString();
    write(new RecordCodec(spec), new RandomRecords(spec, 1, 0.5).next(3), uri, WriteParams.WriteMode.CREATE);
    try (Dataset ds = Dataset.open(uri, arrow.allocator())) {
      String stored = ds.getSchema().getCustomMetadata().get("lancecontext.spec");
      assertEquals(spec.toJson(), stored);
      assertEquals(spec.toArrowSchema().getFields(), ds.getSchema().getFields(), "dataset schema is the spec's Arrow schema");
    }
  }

  @Test
  void aBadRecordWritesNothing() throws Exception {
    SchemaSpec spec = SchemaPresets.rollout(8);
    RecordCodec codec = new RecordCodec(spec);
    String uri = dir.resolve("bad").toString();
    write(codec, new RandomRecords(spec, 2, 0.5).next(10), uri, WriteParams.WriteMode.CREATE);
    List<Map<String, Object>> batch = new RandomRecords(spec, 3, 0.5).next(10);
    batch.get(7).put("reward", "high");
    InvalidRecordException e = assertThrows(InvalidRecordException.class,
        () -> write(codec, batch, uri, WriteParams.WriteMode.APPEND));
    assertEquals("reward", e.column());
    assertEquals(7, e.row());
    try (Dataset ds = Dataset.open(uri, arrow.allocator())) {
      assertEquals(10, ds.countRows());
      assertEquals(1, ds.version());
    }
  }

  private void write(RecordCodec codec, List<Map<String, Object>> records, String uri, WriteParams.WriteMode mode) {
    try (VectorSchemaRoot root = codec.encode(records, arrow.allocator());
        ArrowReader reader = new BatchesReader(root, arrow.allocator());
        Dataset ignored = Dataset.write().allocator(arrow.allocator()).reader(reader).uri(uri).mode(mode).execute()) {
      // written
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private List<Map<String, Object>> readAll(Dataset ds, SchemaSpec spec) throws Exception {
    RecordCodec codec = new RecordCodec(spec);
    List<Map<String, Object>> out = new ArrayList<>();
    ScanOptions options = new ScanOptions.Builder().withRowId(true).build();
    try (LanceScanner scanner = ds.newScan(options); ArrowReader reader = scanner.scanBatches()) {
      while (reader.loadNextBatch()) {
        try (VectorSchemaRoot batch = BlobMaterializer.materialize(LanceDataset.wrap(ds), spec, reader.getVectorSchemaRoot(),
            spec.columnNames(), arrow.allocator())) {
          out.addAll(codec.decode(batch));
        }
      }
    }
    assertEquals(-1, spec.columnNames().indexOf(MetadataColumns.ROWID));
    return out;
  }
}
