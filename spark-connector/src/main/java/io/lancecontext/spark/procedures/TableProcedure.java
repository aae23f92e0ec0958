package io.lancecontext.spark.procedures;

import io.lancecontext.core.ContextStore;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.procedures.BoundProcedure;
import org.apache.spark.sql.connector.catalog.procedures.UnboundProcedure;
import org.apache.spark.sql.types.StructType;

/**
 * What the catalog's procedures share: a name, the table they run on (argument {@code table}, opened by the
 * catalog), no binding step, and results that depend on the store's state.
 */
public abstract class TableProcedure implements UnboundProcedure, BoundProcedure {
  /** Opens a table's store by its name within the catalog. */
  @FunctionalInterface
  public interface Stores {
    ContextStore open(String table);
  }

  private final String name;
  private final Stores stores;

  TableProcedure(String name, Stores stores) {
    this.name = name;
    this.stores = stores;
  }

  @Override
  public final String name() {
    return name;
  }

  @Override
  public final BoundProcedure bind(StructType inputType) {
    return this;
  }

  @Override
  public final boolean isDeterministic() {
    return false;
  }

  /** The store of argument {@code table} (the first). Close it. */
  final ContextStore openTable(InternalRow input) {
    return stores.open(argument(input, 0, "table"));
  }

  /** The string argument at {@code i}, which is required. */
  final String argument(InternalRow input, int i, String parameter) {
    if (input.isNullAt(i)) {
      throw new IllegalArgumentException("procedure " + name + ": argument '" + parameter + "' is required");
    }
    return input.getUTF8String(i).toString();
  }
}
