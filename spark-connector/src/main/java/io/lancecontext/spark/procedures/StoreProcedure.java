package io.lancecontext.spark.procedures;

import io.lancecontext.core.ContextStore;
import java.util.Iterator;
import java.util.List;
import java.util.function.Function;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.procedures.BoundProcedure;
import org.apache.spark.sql.connector.catalog.procedures.ProcedureParameter;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * A maintenance procedure of the catalog, {@code CALL lc.system.<name>(table => 'db.t')}: runs one core
 * maintenance call on the table's store and returns its result as one row (one column per field).
 */
public final class StoreProcedure implements UnboundProcedure, BoundProcedure {
  /** The procedures, by name: what each runs. */
  public static final List<String> NAMES = List.of("merge", "flush", "compact", "gc", "stats");

  /** Opens a table's store by its name within the catalog. */
  @FunctionalInterface
  public interface Stores {
    ContextStore open(String table);
  }

  private final String name;
  private final Function<ContextStore, Record> action;
  private final Stores stores;

  private StoreProcedure(String name, Function<ContextStore, Record> action, Stores stores) {
    this.name = name;
    this.action = action;
    this.stores = stores;
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
  public String name() {
    return name;
  }

  @Override
  public String description() {
    return switch (name) {
      case "merge" -> "seals this JVM's open generations and merges every sealed generation into the base table";
      case "flush" -> "folds every acknowledged row into the base table (claims and seals every shard, merges)";
      case "compact" -> "compacts the base table's fragments";
      case "stats" -> "reports the store's rows, fragments, fresh tier, shards and bytes on disk";
      default -> "deletes files no snapshot younger than gc.grace needs";
    };
  }

  @Override
  public BoundProcedure bind(StructType inputType) {
    return this;
  }

  @Override
  public ProcedureParameter[] parameters() {
    return new ProcedureParameter[] {ProcedureParameter.in("table", DataTypes.StringType).build()};
  }

  @Override
  public boolean isDeterministic() {
    return false;
  }

  @Override
  public Iterator<Scan> call(InternalRow input) {
    if (input.isNullAt(0)) {
      throw new IllegalArgumentException("procedure " + name + ": argument 'table' is required");
    }
    try (ContextStore store = stores.open(input.getUTF8String(0).toString())) {
      return List.<Scan>of(ResultRows.of(action.apply(store))).iterator();
    }
  }
}
