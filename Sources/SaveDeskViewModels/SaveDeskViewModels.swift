import RetentionDomain
import SaveDeskClient

/// SaveDeskViewModels: one @MainActor @Observable model per flow.
/// Filled by the client and view-model issue.
public enum SaveDeskViewModelsModule {}
