package io.lancecontext.flink.sink;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.runtime.state.StateInitializationContext;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableSummary;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * The pre-commit step of an exactly-once sink (parallelism 1): gathers every writer subtask's
 * {@link LanceContextWriteResult} and, when a checkpoint's barrier reaches it, emits one
 * {@link LanceContextCommittable} holding all of them, so that one committer publishes each checkpoint
 * once. Writers emit their results before they forward the barrier, and Flink keeps the sink's edges
 * aligned, so at barrier {@code n} this operator holds every subtask's result for {@code n} (and results
 * of an aborted checkpoint that reached only some writers, which are published with {@code n}). At the end
 * of input the last results go with checkpoint id {@code last + 1}, which the final checkpoint (or, in
 * batch mode, the end of input) commits. Keeps no state: what it holds at a barrier goes downstream before
 * the snapshot, and what it holds between barriers is replayed by the writers after a failover.
 */
final class LanceContextCommitAggregator extends AbstractStreamOperator<CommittableMessage<LanceContextCommittable>>
    implements OneInputStreamOperator<CommittableMessage<LanceContextWriteResult>,
        CommittableMessage<LanceContextCommittable>> {
  private static final long serialVersionUID = 1L;

  private transient Map<String, List<byte[]>> results;
  private transient long lastCheckpointId;

  @Override
  public void initializeState(StateInitializationContext context) throws Exception {
    super.initializeState(context);
    results = new LinkedHashMap<>();
    lastCheckpointId = context.getRestoredCheckpointId().orElse(0L);
  }

  @Override
  public void processElement(StreamRecord<CommittableMessage<LanceContextWriteResult>> element) {
    if (element.getValue() instanceof CommittableWithLineage<LanceContextWriteResult> c) {
      LanceContextWriteResult r = c.getCommittable();
      results.computeIfAbsent(r.transactionId(), t -> new ArrayList<>()).add(r.summary());
    }
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    emit(checkpointId);
  }

  @Override
  public void finish() throws Exception {
    emit(lastCheckpointId + 1);
    super.finish();
  }

  private void emit(long checkpointId) {
    if (checkpointId <= lastCheckpointId && results.isEmpty()) {
      return;
    }
    lastCheckpointId = Math.max(lastCheckpointId, checkpointId);
    if (results.isEmpty()) {
      return;
    }
    LanceContextCommittable committable = new LanceContextCommittable(checkpointId, results);
    output.collect(new StreamRecord<>(new CommittableSummary<>(0, 1, checkpointId, 1, 0)));
    output.collect(new StreamRecord<>(new CommittableWithLineage<>(committable, checkpointId, 0)));
    results = new LinkedHashMap<>();
  }
}
