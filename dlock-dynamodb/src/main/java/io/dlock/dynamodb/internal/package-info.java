/**
 * The DynamoDB backend's implementation. Not an API: nothing here is meant to be used outside
 * dlock-dynamodb, and it may change in any release.
 */
package io.dlock.dynamodb.internal;
