import RetentionDomain
import SaveDeskAPI

/// SaveDeskServer: the Hummingbird application, store and billing ledger.
/// Filled by the backend core issue.
public enum SaveDeskServerModule {}
