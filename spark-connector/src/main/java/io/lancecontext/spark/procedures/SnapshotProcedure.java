package io.lancecontext.spark.procedures;

import io.lancecontext.core.ContextStore;
import io.lancecontext.core.read.StoreSnapshot;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.procedures.ProcedureParameter;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.DataTypes;

/**
 * The snapshot procedures of the catalog: {@code snapshot(table)} takes a snapshot and returns its token;
 * {@code tag(table, tag[, snapshot])} tags the store as it is (or the snapshot a token or another tag names);
 * {@code drop_tag(table, tag)}; {@code tags(table)} lists them. Each returns rows of {@code token},
 * {@code taken_at}, {@code tag} (drop_tag: {@code tag}, {@code dropped}). Core decides everything.
 */
public final class SnapshotProcedure extends TableProcedure {
  public static final List<String> NAMES = List.of("snapshot", "tag", "drop_tag", "tags");

  /** What drop_tag returns. */
  record Dropped(String tag, boolean dropped) {}

  private SnapshotProcedure(String name, Stores stores) {
    super(name, stores);
  }

  /** The procedure {@code name}, or null if there is none. */
  public static SnapshotProcedure named(String name, Stores stores) {
    return NAMES.contains(name) ? new SnapshotProcedure(name, stores) : null;
  }

  @Override
  public String description() {
    return switch (name()) {
      case "snapshot" -> "takes a snapshot of the table and returns its token (readable for snapshot.retention)";
      case "tag" -> "tags the table as it is, or the snapshot a token or tag names: kept until drop_tag";
      case "drop_tag" -> "drops a tag: what only it kept is collected by a later gc";
      default -> "lists the table's tags";
    };
  }

  @Override
  public ProcedureParameter[] parameters() {
    ProcedureParameter table = ProcedureParameter.in("table", DataTypes.StringType).build();
    ProcedureParameter tag = ProcedureParameter.in("tag", DataTypes.StringType).build();
    return switch (name()) {
      case "tag" -> new ProcedureParameter[] {table, tag,
          ProcedureParameter.in("snapshot", DataTypes.StringType).defaultValue("NULL").build()};
      case "drop_tag" -> new ProcedureParameter[] {table, tag};
      default -> new ProcedureParameter[] {table};
    };
  }

  @Override
  public Iterator<Scan> call(InternalRow input) {
    try (ContextStore store = openTable(input)) {
      Scan out = switch (name()) {
        case "snapshot" -> ResultRows.of(store.snapshot());
        case "tag" -> ResultRows.of(input.isNullAt(2) ? store.tag(argument(input, 1, "tag"))
            : store.tag(argument(input, 1, "tag"), input.getUTF8String(2).toString()));
        case "drop_tag" -> {
          String tag = argument(input, 1, "tag");
          yield ResultRows.of(new Dropped(tag, store.dropTag(tag)));
        }
        default -> ResultRows.of(store.tags(), StoreSnapshot.class);
      };
      return List.of(out).iterator();
    }
  }

}
