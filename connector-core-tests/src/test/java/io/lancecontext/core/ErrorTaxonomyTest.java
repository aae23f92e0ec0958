package io.lancecontext.core;

import static io.lancecontext.core.testing.StoreTest.options;
import static io.lancecontext.core.StoreTestSupport.rec;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.lancecontext.core.error.BadOptionException;
import io.lancecontext.core.error.CommitConflictException;
import io.lancecontext.core.error.FencedWriterException;
import io.lancecontext.core.error.InvalidRecordException;
import io.lancecontext.core.error.LanceContextException;
import io.lancecontext.core.error.OperationInterruptedException;
import io.lancecontext.core.error.SchemaException;
import io.lancecontext.core.error.StorageException;
import io.lancecontext.core.error.StoreClosedException;
import io.lancecontext.core.error.StoreNotFoundException;
import io.lancecontext.core.error.WriteInterruptedException;
import io.lancecontext.core.error.WriteNotAcknowledgedException;
import io.lancecontext.core.error.WriteTimeoutException;
import io.lancecontext.core.internal.lance.LanceErrors;
import io.lancecontext.core.testing.StoreTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The error taxonomy: every failure typed, retry safety stated, "not acknowledged" named, causes kept. */
class ErrorTaxonomyTest extends StoreTest {
  @Test
  void everyErrorSaysWhetherRetryingTheCallIsSafe() {
    Throwable cause = new RuntimeException("cause");
    for (LanceContextException e : List.of(new SchemaException("c", "bad"), new InvalidRecordException("c", 0, "bad"),
        new BadOptionException("k", "bad"), new StoreNotFoundException("/x", cause), new StorageException("io", cause),
        new StoreClosedException("handle closed", false))) {
      assertFalse(e.isRetryable(), e.getClass().getSimpleName() + " fails the same way again");
    }
    for (LanceContextException e : List.of(new CommitConflictException("lost"), new FencedWriterException("fenced"),
        new WriteTimeoutException("slow"), new WriteInterruptedException("cancelled"),
        new OperationInterruptedException("cancelled", cause), new StoreClosedException("closed underneath", true))) {
      assertTrue(e.isRetryable(), e.getClass().getSimpleName() + " may succeed when retried");
    }
    for (LanceContextException e : List.of(new FencedWriterException("f"), new WriteTimeoutException("t"),
        new WriteInterruptedException("i"))) {
      assertInstanceOf(WriteNotAcknowledgedException.class, e, "fenced, timed out and interrupted adds are not acknowledged");
    }
    assertFalse(FencedWriterException.class.isAssignableFrom(WriteTimeoutException.class), "a timeout is not a fence");
  }

  @Test
  void lanceCoreFailuresAreTranslatedKeepingTheirCause() {
    IllegalArgumentException schema = new IllegalArgumentException("Schema error: No field named nope");
    assertSame(schema, assertInstanceOf(SchemaException.class, LanceErrors.translate("scan", schema)).getCause());
    UncheckedIOException io = new UncheckedIOException(new IOException("disk gone"));
    LanceContextException storage = LanceErrors.translate("read", io);
    assertInstanceOf(StorageException.class, storage);
    assertSame(io, storage.getCause());
    RuntimeException fenced = new RuntimeException("Writer fenced: epoch 3");
    assertSame(fenced, assertInstanceOf(FencedWriterException.class, LanceErrors.translate("put", fenced)).getCause());
    RuntimeException conflict = new RuntimeException("Retryable commit conflict for version 7");
    assertTrue(assertInstanceOf(CommitConflictException.class, LanceErrors.translate("merge", conflict)).isRetryable());
    assertFalse(storage.isRetryable(), "an I/O failure as such is looked at, not repeated");
  }

  @Test
  void anObjectStoresTransientAnswersAreRetryableStorageErrorsAndOthersAreNot() {
    for (String message : java.util.List.of(
        "LanceError(IO): Generic S3 error: Error after 10 retries in 2.5s, max_retries:10, retry_timeout:180s, "
            + "source:HTTP status server error (503 Service Unavailable) for url (http://127.0.0.1:9000/b/k)",
        "LanceError(IO): Generic S3 error: Client error with status 429 Too Many Requests: SlowDown",
        "LanceError(IO): Generic S3 error: error sending request for url (http://127.0.0.1:9000/b/k): connection reset",
        "LanceError(IO): Generic S3 error: operation timed out")) {
      LanceContextException e = LanceErrors.translate("read", new RuntimeException(message));
      assertInstanceOf(StorageException.class, e, message);
      assertTrue(e.isRetryable(), message);
    }
    for (String message : java.util.List.of("LanceError(IO): Generic S3 error: Client error with status 403 Forbidden",
        "Encountered internal error. Please file a bug report at https://github.com/lancedb/lance/issues. "
            + "Expected option to have value")) {
      assertFalse(LanceErrors.translate("read", new RuntimeException(message)).isRetryable(), message);
    }
  }

  @Test
  void aClosedHandleOrWriterHandleFailsWithANonRetryableStoreClosedError() {
    ContextStore store = ContextStore.open(options(dir, "closed", "rollout"));
    var writer = store.newWriter();
    writer.close();
    StoreClosedException w = assertThrows(StoreClosedException.class, () -> writer.write(rec("id", "a")));
    assertFalse(w.isRetryable());
    store.close();
    StoreClosedException h = assertThrows(StoreClosedException.class, () -> store.add(List.of(rec("id", "a"))));
    assertFalse(h.isRetryable(), "the same call on a closed handle fails again");
    assertThrows(StoreClosedException.class, store::count);
  }

  @Test
  void aStoreClosedUnderAnOpenHandleFailsRetryablyAndOpeningItAgainRecovers() {
    Map<String, String> o = options(dir, "underneath", "rollout");
    try (ContextStore store = ContextStore.open(o)) {
      store.add(List.of(rec("id", "a")));
      ContextStore.closeAllResident();
      for (Runnable call : List.<Runnable>of(() -> store.add(List.of(rec("id", "b"))), store::count, () -> store.get("a"),
          store::stats, store::merge, store::seal)) {
        StoreClosedException e = assertThrows(StoreClosedException.class, call::run);
        assertTrue(e.isRetryable(), "the next open reopens the store: " + e.getMessage());
      }
    }
    try (ContextStore again = ContextStore.open(Map.of("path", o.get("path")))) {
      again.add(List.of(rec("id", "b")));
      assertEquals(2, again.count());
    }
  }
}
