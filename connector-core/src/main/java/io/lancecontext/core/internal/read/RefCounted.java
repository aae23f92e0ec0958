package io.lancecontext.core.internal.read;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A resource shared between a cache and the reads using it: created with one reference (the creator's),
 * released by {@link #release()}, freed when the last reference goes.
 */
public abstract class RefCounted {
  private final AtomicInteger refs = new AtomicInteger(1);

  /** Takes a reference; false if the resource was already freed. */
  public final boolean retain() {
    while (true) {
      int r = refs.get();
      if (r <= 0) {
        return false;
      }
      if (refs.compareAndSet(r, r + 1)) {
        return true;
      }
    }
  }

  public final void release() {
    int r = refs.decrementAndGet();
    if (r == 0) {
      free();
    } else if (r < 0) {
      throw new IllegalStateException("released more often than retained: " + this);
    }
  }

  protected abstract void free();
}
