import RetentionDomain
import SaveDeskAPI

/// SaveDeskClient: the HTTP facade, durable outbox and StoreKit sync queue.
/// Filled by the client and view-model issue.
public enum SaveDeskClientModule {}
