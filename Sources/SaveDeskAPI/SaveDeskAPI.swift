// SaveDeskAPI: `openapi.yaml` is the contract between client and server. The
// swift-openapi-generator build plugin generates `Components`, `Operations`, `Client` and
// `APIProtocol` from it at build time; nothing generated is committed.
