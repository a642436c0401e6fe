import Foundation
import SaveDeskServer

/// `savedesk-server import customers` at scale: a CSV of generated customers (the names and emails
/// the search scenarios look for) imported into a server's SQLite database, as an operator would.
/// Target: 100,000 customers in under 60 s. The search scenarios then run on what was imported.
enum ImportBench {
    /// Writes the CSV, imports it, and returns the import's time (the file's writing excluded).
    static func run(count: Int, databasePath: String, directory: URL) async throws -> (seconds: Double, report: CustomerImport.Report) {
        let file = directory.appendingPathComponent("customers-\(count).csv")
        FileManager.default.createFile(atPath: file.path, contents: nil)
        let handle = try FileHandle(forWritingTo: file)
        handle.write(Data("id,mode,name,email,country,app_store_original_transaction_ids\n".utf8))
        var chunk = ""
        for index in 0..<count {
            let name = "\(SearchBench.first[index % SearchBench.first.count]) \(SearchBench.last[(index / SearchBench.first.count) % SearchBench.last.count]) \(index)"
            chunk += "cus_bench_\(index),test,\(name),customer\(index)@bench.example,US,\(index % 10 == 0 ? String(3_000_000_000_000_000 + index) : "")\n"
            if chunk.utf8.count > 1 << 20 {
                handle.write(Data(chunk.utf8))
                chunk = ""
            }
        }
        handle.write(Data(chunk.utf8))
        try handle.close()
        let started = ContinuousClock.now
        let report = try await CustomerImport.run(file: file.path, databasePath: databasePath)
        let elapsed = ContinuousClock.now - started
        try? FileManager.default.removeItem(at: file)
        return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18, report)
    }
}
