import Foundation
import RetentionDomain

extension CancelFlowSession {
    /// What the screen shows now, as plain values (`now`: the server's time, for the pause
    /// picker's resume dates; without it they are left out).
    public func view(now: Date? = nil) -> CancelFlowView {
        switch phase {
        case .loading: return CancelFlowView(content: .loading)
        case .unavailable(let message): return CancelFlowView(content: .unavailable(message: message))
        case .applying(let label): return CancelFlowView(content: .applying(label: label), page: page)
        case .failed(let message): return CancelFlowView(content: .failed(message: message), page: page)
        case .finished(let outcome): return CancelFlowView(content: .ending(ending(outcome)), page: page)
        case .inFlow: break
        }
        guard let navigator, let content = content(of: navigator, now: now) else { return CancelFlowView(content: .loading) }
        let progress = navigator.progress
        return CancelFlowView(
            content: content, page: navigator.page, progress: .init(step: progress.step, total: progress.total),
            unavailableNote: unavailableNote, canGoBack: navigator.canGoBack
        )
    }

    private func content(of navigator: CancelFlow.Navigator, now: Date?) -> CancelFlowView.Content? {
        switch navigator.page {
        case .question(let index):
            let question = navigator.questions[index]
            var chosen: Int?, text: String?
            switch navigator.selection {
            case .option(let id)?: chosen = id
            case .freeText(let words)?: text = words
            default: break
            }
            return .question(.init(
                text: question.questionText, isRequired: question.isRequired, isFreeText: question.questionType != .singleSelect,
                options: question.options.map { .init(id: $0.id, label: $0.label) }, chosenOptionId: chosen, freeText: text
            ))
        case .retention(.offer):
            switch saveOffer {
            case .switchAndSave(let terms)?:
                let checkout = isAwaitingSwitchPayment ? switchAndSave?.checkout.map { CancelFlowView.SwitchOffer.Checkout(url: $0.checkoutUrl, transactionId: $0.transactionId) } : nil
                return .switchOffer(.init(terms: terms, checkout: checkout, message: appleMessage))
            case .offerCode(let pool)?:
                return .offer(.init(title: pool.title, body: pool.body, ctaText: pool.ctaText, prices: nil))
            case .coupon(let offer)?:
                return .offer(couponOffer(title: offer.title, body: offer.body, ctaText: offer.ctaText))
            case nil:
                guard let offer = config?.offer else { return nil }
                return .offer(couponOffer(title: offer.title, body: offer.body, ctaText: "Accept"))
            }
        case .retention(.pause):
            guard let pause = config?.pause else { return nil }
            return .pause(.init(
                title: pause.title, body: pause.body, ctaText: pause.ctaText,
                options: pause.orderedOptions.map { option in .init(id: option.id, label: option.label, resumesOn: now.flatMap { option.resumesAt(from: $0) }) }
            ))
        case .cancelConfirmation where isAppStoreCancellation:
            let steps: [String] = if case .appStore(let steps)? = plan?.cancellation { steps } else { [] }
            return .appStoreSteps(.init(productName: productName(productId), steps: steps, periodEnd: periodEnd))
        case .cancelConfirmation:
            return .confirmation(.init(periodEnd: periodEnd, appleNote: plan?.appleNote))
        case .finished:
            return nil
        }
    }

    private func couponOffer(title: String, body: String, ctaText: String) -> CancelFlowView.Offer {
        .init(title: title, body: body, ctaText: ctaText, prices: .init(
            now: currentPrice.map { Display.price($0, interval: billingInterval) },
            withOffer: offerPrice.map { Display.price($0, interval: billingInterval) }
        ))
    }

    private func ending(_ outcome: Outcome) -> CancelFlowView.Ending {
        .init(
            outcome: outcome, appleSide: appleSide,
            appleCancellation: appleCancellation.map { Display.appStoreCancellation($0, productName: productName($0.productId)) },
            appleMessage: appleMessage, appleNote: plan?.billing == .both ? plan?.appleNote : nil, isRecorded: submittedResponse != nil
        )
    }
}
