/**
 * Micrometer meters for dlock: {@link io.dlock.micrometer.MicrometerLockListener} records
 * acquires by outcome and their wait, hold times, renewals and their failures, lost leases by
 * reason and the locks held now, tagged by backend (and, if asked, by lock name).
 */
package io.dlock.micrometer;
