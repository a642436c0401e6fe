import RetentionDomain

/// SaveDeskAPI: the HTTP contract (openapi.yaml, generated at build time by
/// swift-openapi-generator). The spec and the generator arrive with the backend core issue.
public enum SaveDeskAPIModule {}
