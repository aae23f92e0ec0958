package io.lancecontext.core.internal.lance;

import org.apache.arrow.vector.ipc.ArrowReader;
import org.lance.ipc.LanceScanner;

/** A Lance scanner and its batch reader, opened and closed together. */
public final class ScanHandle implements AutoCloseable {
  private final LanceScanner scanner;
  private final ArrowReader reader;

  private ScanHandle(LanceScanner scanner, ArrowReader reader) {
    this.scanner = scanner;
    this.reader = reader;
  }

  /** Opens a scan of {@code dataset}; see {@link LanceDataset#scan}. */
  public static ScanHandle open(LanceDataset dataset, ScanRequest request) {
    LanceScanner scanner = dataset.lance().newScan(request.options());
    try {
      return new ScanHandle(scanner, scanner.scanBatches());
    } catch (RuntimeException e) {
      try {
        scanner.close();
      } catch (Exception suppressed) {
        e.addSuppressed(suppressed);
      }
      throw e;
    }
  }

  public ArrowReader reader() {
    return reader;
  }

  @Override
  public void close() {
    try (LanceScanner s = scanner; ArrowReader r = reader) {
      // both closed, reader first
    } catch (Exception e) {
      throw LanceErrors.translate("close a scan", e);
    }
  }
}
