package io.dlock.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The local queue on its own: arrival order, hand-over, and waiters that give up. */
class LocalQueueTest {

    private final LocalQueue queue = new LocalQueue();
    private final List<String> granted = new ArrayList<>();

    private LocalQueue.Waiter enter(String id) {
        return queue.enter("a", () -> granted.add(id));
    }

    @Test
    void theFirstTakesTheSlotAndTheOthersGetItInArrivalOrder() {
        LocalQueue.Waiter a = enter("a");
        LocalQueue.Waiter b = enter("b");
        LocalQueue.Waiter c = enter("c");
        assertTrue(a.holds());
        assertFalse(b.holds());
        assertEquals(2, queue.waiting("a"));
        queue.release(a);
        assertEquals(List.of("b"), granted);
        assertTrue(b.holds());
        queue.release(b);
        assertEquals(List.of("b", "c"), granted);
        queue.release(c);
        assertEquals(0, queue.size(), "the slot is removed when nobody holds or waits");
    }

    @Test
    void aWaiterThatLeavesBeforeItsTurnIsSkipped() {
        LocalQueue.Waiter a = enter("a");
        LocalQueue.Waiter b = enter("b");
        LocalQueue.Waiter c = enter("c");
        queue.leave(b);
        queue.leave(b); // idempotent
        queue.release(a);
        assertEquals(List.of("c"), granted);
        queue.release(c);
        assertEquals(0, queue.size());
    }

    @Test
    void aWaiterThatLeavesAfterTheSlotReachedItPassesItOn() {
        LocalQueue.Waiter a = enter("a");
        LocalQueue.Waiter b = enter("b");
        LocalQueue.Waiter c = enter("c");
        queue.release(a);
        assertTrue(b.holds(), "handed to b");
        queue.leave(b); // b gave up as the slot arrived: no lost slot
        assertEquals(List.of("b", "c"), granted);
        assertTrue(c.holds());
        queue.release(b); // a stale release by b does nothing: no double grant
        assertTrue(c.holds());
        assertEquals(List.of("b", "c"), granted);
        queue.release(c);
        assertEquals(0, queue.size());
    }

    @Test
    void tryEnterTakesOnlyAFreeSlotAndNeverQueues() {
        LocalQueue.Waiter a = queue.tryEnter("a");
        assertTrue(a.holds());
        assertNull(queue.tryEnter("a"));
        assertEquals(0, queue.waiting("a"));
        queue.release(a);
        assertEquals(0, queue.size());
        LocalQueue.Waiter again = queue.tryEnter("a");
        assertTrue(again.holds());
        queue.leave(again);
        assertEquals(0, queue.size());
    }
}
