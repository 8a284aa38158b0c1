/** The etcd backend's implementation; not an API. */
package io.dlock.etcd.internal;
