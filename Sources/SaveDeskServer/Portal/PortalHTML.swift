import Foundation
import RetentionDomain

/// The customer portal's plain server-rendered pages.
enum PortalHTML {
    struct Row {
        var productId: String
        var productName: String
        var isWeb: Bool
        var summary: String
        var canResume: Bool
        var canCancel: Bool
    }

    /// Text for HTML content or a quoted attribute (scalar by scalar: a quote with a combining
    /// mark after it is still a quote to the browser).
    static func escape(_ text: String) -> String {
        text.replacingScalars {
            switch $0 {
            case "&": "&amp;"
            case "<": "&lt;"
            case ">": "&gt;"
            case "\"": "&quot;"
            case "'": "&#39;"
            default: nil
            }
        }
    }

    static func document(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <style>body{font-family:system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}
        li{margin:1rem 0}form{display:inline}.notice{background:#eef;padding:.5rem}</style></head>
        <body>\(body)</body></html>
        """
    }

    static func message(title: String, body: String) -> String {
        document(title: title, body: "<h1>\(escape(title))</h1><p>\(escape(body))</p>")
    }

    static func portal(customerName: String, token: String, rows: [Row], notice: String?, returnURL: String?) -> String {
        var body = "<h1>Billing for \(escape(customerName))</h1>"
        if let notice { body += "<p class=\"notice\">\(escape(notice))</p>" }
        body += rows.isEmpty ? "<p>No subscriptions.</p>" : "<ul>"
        for row in rows {
            body += "<li><strong>\(escape(row.productName))</strong> (\(row.isWeb ? "Web" : "App Store")) — \(escape(row.summary))"
            if row.canResume {
                body += " <form method=\"post\" action=\"/portal/\(token)/resume?product_id=\(escape(row.productId))\"><button>Resume now</button></form>"
            }
            if row.canCancel {
                body += " <form method=\"post\" action=\"/portal/\(token)/cancel?product_id=\(escape(row.productId))\"><button>Cancel at period end</button></form>"
            }
            if !row.isWeb { body += " <em>Manage this one in the App Store (Settings → your name → Subscriptions).</em>" }
            body += "</li>"
        }
        if !rows.isEmpty { body += "</ul>" }
        if let returnURL { body += "<p><a href=\"\(escape(returnURL))\">Back to the app</a></p>" }
        return document(title: "Billing", body: body)
    }

    /// After a change: what was done. The link is used up; there are no more buttons.
    static func done(customerName: String, notice: String, returnURL: String?) -> String {
        var body = "<h1>Billing for \(escape(customerName))</h1><p class=\"notice\">\(escape(notice))</p>"
        body += "<p>This link has now been used. Ask support for a new one to make another change.</p>"
        if let returnURL { body += "<p><a href=\"\(escape(returnURL))\">Back to the app</a></p>" }
        return document(title: "Billing", body: body)
    }
}
