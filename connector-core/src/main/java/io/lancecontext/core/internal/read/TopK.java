package io.lancecontext.core.internal.read;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/** The {@code k} nearest keys offered, nearest first; ties broken by key so that results are repeatable. */
final class TopK {
  /** A key and its distance. */
  record Hit(String key, float distance) {}

  static final Comparator<Hit> NEAREST_FIRST = Comparator.comparingDouble(Hit::distance).thenComparing(Hit::key);

  private final int k;
  private final PriorityQueue<Hit> farthestFirst;

  TopK(int k) {
    this.k = k;
    this.farthestFirst = new PriorityQueue<>(k + 1, NEAREST_FIRST.reversed());
  }

  /** Whether a row at {@code distance} could still be among the k nearest. */
  boolean wants(float distance) {
    return farthestFirst.size() < k || distance <= farthestFirst.peek().distance();
  }

  void offer(String key, float distance) {
    farthestFirst.add(new Hit(key, distance));
    if (farthestFirst.size() > k) {
      farthestFirst.poll();
    }
  }

  int size() {
    return farthestFirst.size();
  }

  List<Hit> nearestFirst() {
    List<Hit> out = new ArrayList<>(farthestFirst);
    out.sort(NEAREST_FIRST);
    return out;
  }
}
