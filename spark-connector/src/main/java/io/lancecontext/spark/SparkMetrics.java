package io.lancecontext.spark;

import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomSumMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;

/**
 * The connector's metrics in the Spark UI (SQL tab, on the write and scan nodes): each is a sum over tasks
 * (or, for puts, staged parts and published transactions, reported by the driver from the committed tasks'
 * summaries). Spark instantiates the classes by name on the driver to aggregate, hence one public class with
 * a no-argument constructor per metric.
 */
public final class SparkMetrics {
  private SparkMetrics() {}

  public static final String ROWS_WRITTEN = "lcRowsWritten";
  public static final String BYTES_WRITTEN = "lcBytesWritten";
  public static final String PUTS = "lcPuts";
  public static final String STAGED_PARTS = "lcStagedParts";
  public static final String PUBLISHED_TRANSACTIONS = "lcPublishedTransactions";
  public static final String FRESH_ROWS_READ = "lcFreshRowsRead";
  public static final String FRAGMENTS_READ = "lcFragmentsRead";

  /** Rows the tasks handed to their writers (before dedupe by key). */
  public static final class RowsWritten extends CustomSumMetric {
    @Override
    public String name() {
      return ROWS_WRITTEN;
    }

    @Override
    public String description() {
      return "lancecontext rows written";
    }
  }

  /** Bytes of the Spark rows handed to the writers (their in-memory size). */
  public static final class BytesWritten extends CustomSumMetric {
    @Override
    public String name() {
      return BYTES_WRITTEN;
    }

    @Override
    public String description() {
      return "lancecontext bytes written";
    }
  }

  /** MemWAL puts ({@code immediate}) or staged parts ({@code atomic}) of the committed tasks (driver). */
  public static final class Puts extends CustomSumMetric {
    @Override
    public String name() {
      return PUTS;
    }

    @Override
    public String description() {
      return "lancecontext puts";
    }
  }

  /** Transaction parts the committed tasks staged (atomic writes; one per bucket and flush; driver). */
  public static final class StagedParts extends CustomSumMetric {
    @Override
    public String name() {
      return STAGED_PARTS;
    }

    @Override
    public String description() {
      return "lancecontext staged transaction parts";
    }
  }

  /** Transactions the driver published (1 per atomic job or streaming epoch; 0 for a replay already published). */
  public static final class PublishedTransactions extends CustomSumMetric {
    @Override
    public String name() {
      return PUBLISHED_TRANSACTIONS;
    }

    @Override
    public String description() {
      return "lancecontext published transactions";
    }
  }

  /** Rows read from the fresh tier (WAL tails, unmerged generations, published transactions). */
  public static final class FreshRowsRead extends CustomSumMetric {
    @Override
    public String name() {
      return FRESH_ROWS_READ;
    }

    @Override
    public String description() {
      return "lancecontext fresh-tier rows read";
    }
  }

  /** Base-table fragments read. */
  public static final class FragmentsRead extends CustomSumMetric {
    @Override
    public String name() {
      return FRAGMENTS_READ;
    }

    @Override
    public String description() {
      return "lancecontext base fragments read";
    }
  }

  /** The metrics of a write. */
  public static CustomMetric[] write() {
    return new CustomMetric[] {new RowsWritten(), new BytesWritten(), new Puts(), new StagedParts(),
        new PublishedTransactions()};
  }

  /** The metrics of a scan. */
  public static CustomMetric[] read() {
    return new CustomMetric[] {new FreshRowsRead(), new FragmentsRead()};
  }

  /** A task's (or the driver's) value of metric {@code name}. */
  public static CustomTaskMetric value(String name, long value) {
    return new CustomTaskMetric() {
      @Override
      public String name() {
        return name;
      }

      @Override
      public long value() {
        return value;
      }
    };
  }
}
