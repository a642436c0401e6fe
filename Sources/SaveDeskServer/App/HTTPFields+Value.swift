import HTTPTypes

extension HTTPFields {
    /// A field's value as `self[name]` answers it (several fields' values joined with ", "), without
    /// that subscript's cost for the usual one field: it joins even one value through a generic
    /// lazy sequence, a visible part of every request's time in the bench's profile.
    func value(_ name: HTTPField.Name) -> String? {
        var found: String?
        for field in self where field.name == name {
            guard found == nil else { return self[name] }
            found = field.value
        }
        return found
    }
}
