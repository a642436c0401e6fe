import Foundation
import SaveDeskClient

/// The server calls the analytics screen makes; `SaveDeskClient` is the live one.
public protocol FunnelCalls: Sendable {
    func cancelFlowAnalytics(from: Date?, to: Date?, operator: String?) async throws(SaveDeskClientError) -> Wire.CancelFlowAnalytics
    func switchAndSaveAnalytics(from: Date?, to: Date?) async throws(SaveDeskClientError) -> Wire.SwitchAndSaveAnalytics
    func retentionMessageAnalytics(from: Date?, to: Date?) async throws(SaveDeskClientError) -> Wire.RetentionMessageAnalytics
}

extension SaveDeskClient: FunnelCalls {}
