package io.lancecontext.core.internal.lance;

import io.lancecontext.core.read.Predicate;
import io.lancecontext.core.schema.ColumnSpec;
import io.lancecontext.core.schema.ColumnType;
import io.lancecontext.core.schema.SchemaSpec;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.StructVector;

/**
 * Restores the nulls of top-level struct columns in batches read from the base table.
 *
 * <p>lance-core 7.0.0 rebuilds a struct read through its take path (filtered scans, lookups) by merging the
 * validity of its parts, and drops a validity bitmap that is all null: a batch in which every row holds a
 * null struct comes back with every struct valid and every field null (lance issue 7908, fixed upstream by
 * lance PR 8049). A filter on the struct ({@code IS NULL}) still reads the stored definition levels
 * correctly. So when a struct column of a batch reports no nulls, the rows that could be such a lost null
 * (every nullable field null) are re-checked with one {@code key IN (...) AND column IS NULL} query.
 */
public final class StructNulls {
  private StructNulls() {}

  /**
   * Refuses a spec (at store creation) whose nullable structs have non-nullable fields, naming the field:
   * lance-core 7.0.0 stores the placeholder such a field holds under a null struct, but reads it back as null;
   * merging it into the base table then fails ("contained null values even though the field is marked
   * non-null"), and a filtered read of such rows aborts the JVM (a panic in {@code lance_arrow::merge_with_schema}).
   */
  public static void checkStorable(SchemaSpec spec) {
    for (ColumnSpec c : spec.columns()) {
      checkStorable(c, c.name());
    }
  }

  private static void checkStorable(ColumnSpec c, String path) {
    if (c.type() == ColumnType.LIST) {
      checkStorable(c.item(), path + "[]");
    } else if (c.type() == ColumnType.STRUCT) {
      for (ColumnSpec f : c.fields()) {
        if (c.nullable() && !f.nullable()) {
          throw new io.lancecontext.core.error.SchemaException(path + "." + f.name(), "a nullable struct cannot have a "
              + "non-nullable field in a store (lance-core 7.0.0 cannot read it back under a null struct); declare "
              + "the field nullable or the struct non-nullable");
        }
        checkStorable(f, path + "." + f.name());
      }
    }
  }

  /** Sets null the struct slots of {@code batch} that are null in {@code dataset}; needs the key column. */
  public static void repair(SchemaSpec spec, LanceDataset dataset, VectorSchemaRoot batch) {
    for (ColumnSpec c : spec.columns()) {
      if (c.type() != ColumnType.STRUCT || !c.nullable() || !(batch.getVector(c.name()) instanceof StructVector sv)
          || sv.getNullCount() > 0 || batch.getRowCount() == 0) {
        continue;
      }
      List<Integer> suspects = new ArrayList<>();
      for (int r = 0; r < batch.getRowCount(); r++) {
        if (allNullableFieldsNull(sv, c, r)) {
          suspects.add(r);
        }
      }
      if (suspects.isEmpty()) {
        continue;
      }
      VarCharVector key = (VarCharVector) batch.getVector(spec.key());
      List<Object> keys = new ArrayList<>();
      for (int r : suspects) {
        keys.add(new String(key.get(r), StandardCharsets.UTF_8));
      }
      Set<String> nullKeys = nullStructKeys(spec, dataset, c.name(), keys);
      for (int i = 0; i < suspects.size(); i++) {
        if (nullKeys.contains((String) keys.get(i))) {
          sv.setNull(suspects.get(i));
        }
      }
    }
  }

  private static boolean allNullableFieldsNull(StructVector sv, ColumnSpec c, int row) {
    for (ColumnSpec f : c.fields()) {
      FieldVector child = (FieldVector) sv.getChild(f.name());
      if (f.nullable() && child != null && !child.isNull(row)) {
        return false;
      }
    }
    return true;
  }

  private static Set<String> nullStructKeys(SchemaSpec spec, LanceDataset dataset, String column, List<Object> keys) {
    Set<String> wanted = new HashSet<>();
    keys.forEach(k -> wanted.add((String) k));
    LanceSql.Rendered sql = LanceSql.renderSuperset(Predicate.and(Predicate.in(spec.key(), keys), Predicate.isNull(column)));
    Set<String> out = new HashSet<>();
    try (ScanHandle scan = dataset.scan(ScanRequest.of(List.of(spec.key())).filter(sql.sql()))) {
      while (scan.reader().loadNextBatch()) {
        VectorSchemaRoot b = scan.reader().getVectorSchemaRoot();
        VarCharVector key = (VarCharVector) b.getVector(spec.key());
        for (int r = 0; r < b.getRowCount(); r++) {
          String k = new String(key.get(r), StandardCharsets.UTF_8);
          // a superset filter (keys Lance cannot be sent) is narrowed to the keys asked for
          if (wanted.contains(k)) {
            out.add(k);
          }
        }
      }
    } catch (java.io.IOException e) {
      throw io.lancecontext.core.internal.lance.LanceErrors.translate("re-read the nulls of struct column '" + column + "'", e);
    }
    return out;
  }
}
