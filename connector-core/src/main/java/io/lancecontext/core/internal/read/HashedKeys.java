package io.lancecontext.core.internal.read;

import java.nio.charset.StandardCharsets;
import java.util.Set;

/**
 * A set of keys with the 64-bit hashes of its members ({@link KeyHashSet}), computed once, when first asked
 * for. A base scan tests every row's key against the keys the fresh tier holds; testing its hash first, from
 * the key's bytes, needs no {@code String} per row (decoding and hashing 750,000 keys into strings was about
 * half of a {@code count()} of a store with 250,000 fresh keys). Thread-safe.
 */
final class HashedKeys {
  private final Set<String> keys;
  private volatile KeyHashSet hashes;

  HashedKeys(Set<String> keys) {
    this.keys = keys;
  }

  Set<String> keys() {
    return keys;
  }

  KeyHashSet hashes() {
    KeyHashSet h = hashes;
    if (h == null) {
      synchronized (this) {
        h = hashes;
        if (h == null) {
          long[] all = new long[keys.size()];
          int n = 0;
          for (String k : keys) {
            byte[] utf8 = k.getBytes(StandardCharsets.UTF_8);
            all[n++] = KeyHashSet.hash(utf8, utf8.length);
          }
          h = new KeyHashSet(all);
          hashes = h;
        }
      }
    }
    return h;
  }
}
