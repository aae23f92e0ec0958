package io.lancecontext.spark.procedures;

import io.lancecontext.core.ContextStore;
import java.util.Iterator;
import java.util.List;
import java.util.function.Function;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.procedures.ProcedureParameter;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.DataTypes;

/**
 * A maintenance procedure of the catalog, {@code CALL lc.system.<name>(table => 'db.t')}: runs one core
 * maintenance call on the table's store and returns its result as one row (one column per field).
 */
public final class StoreProcedure extends TableProcedure {
  /** The procedures, by name: what each runs. */
  public static final List<String> NAMES = List.of("merge", "flush", "compact", "gc", "stats");

  private final Function<ContextStore, Record> action;

  private StoreProcedure(String name, Function<ContextStore, Record> action, Stores stores) {
    super(name, stores);
    this.action = action;
  }

  /** The procedure {@code name}, or null if there is none. */
  public static StoreProcedure named(String name, Stores stores) {
    return switch (name) {
      case "merge" -> new StoreProcedure(name, ContextStore::merge, stores);
      case "flush" -> new StoreProcedure(name, ContextStore::flush, stores);
      case "compact" -> new StoreProcedure(name, ContextStore::compact, stores);
      case "gc" -> new StoreProcedure(name, ContextStore::gc, stores);
      case "stats" -> new StoreProcedure(name, ContextStore::stats, stores);
      default -> null;
    };
  }

  @Override
  public String description() {
    return switch (name()) {
      case "merge" -> "seals this JVM's open generations and merges every sealed generation into the base table";
      case "flush" -> "folds every acknowledged row into the base table (claims and seals every shard, merges)";
      case "compact" -> "compacts the base table's fragments";
      case "stats" -> "reports the store's rows, fragments, fresh tier, shards and bytes on disk";
      default -> "deletes files no snapshot younger than gc.grace needs";
    };
  }

  @Override
  public ProcedureParameter[] parameters() {
    return new ProcedureParameter[] {ProcedureParameter.in("table", DataTypes.StringType).build()};
  }

  @Override
  public Iterator<Scan> call(InternalRow input) {
    try (ContextStore store = openTable(input)) {
      return List.<Scan>of(ResultRows.of(action.apply(store))).iterator();
    }
  }
}
