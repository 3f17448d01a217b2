/// How many terminal columns text takes, for aligning tables that hold names in any script.
///
/// East Asian Width (Unicode Standard Annex #11): wide (W) and fullwidth (F) characters — CJK
/// ideographs, kana, Hangul, fullwidth forms, emoji shown as emoji — take two columns; combining
/// marks, format characters and variation selectors take none; everything else takes one.
/// `山田太郎` is 8 columns wide, `ﾔﾏﾀﾞ` (halfwidth katakana) 4.
enum DisplayWidth {
    /// The number of columns `text` takes on a terminal.
    static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    /// `text` followed by spaces up to `width` columns (unchanged if it is already as wide).
    static func pad(_ text: String, to width: Int) -> String {
        let w = of(text)
        return w >= width ? text : text + String(repeating: " ", count: width - w)
    }

    /// Columns of one grapheme cluster. An emoji (a sequence too, or one written with U+FE0F
    /// such as "❤️") is one two-column glyph; otherwise its scalars add up, as a terminal draws them
    /// (`ﾀﾞ`, halfwidth katakana with its voiced mark, is one cluster but two columns).
    static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        if scalars.contains(where: \.properties.isEmojiPresentation) { return 2 }
        if scalars.contains("\u{FE0F}"), scalars.first?.properties.isEmoji == true { return 2 }
        return scalars.reduce(0) { $0 + (isZeroWidth($1) ? 0 : isWide($1) ? 2 : 1) }
    }

    static func isWide(_ s: Unicode.Scalar) -> Bool {
        let v = s.value
        return wideRanges.contains { $0.contains(v) }
    }

    static func isZeroWidth(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return true
        default: return s.properties.isVariationSelector || (0x1160...0x11FF).contains(s.value)  // Hangul medial/final jamo
        }
    }

    /// East Asian Width W and F blocks (emoji are covered by Emoji_Presentation above).
    static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F,    // Hangul Jamo initial consonants
        0x2329...0x232A,    // angle brackets
        0x2E80...0x303E,    // CJK radicals, Kangxi, ideographic description, CJK symbols and punctuation
        0x3041...0x33FF,    // Hiragana, Katakana, Bopomofo, Hangul compatibility jamo, Kanbun, CJK strokes, enclosed, compatibility
        0x3400...0x4DBF,    // CJK extension A
        0x4E00...0x9FFF,    // CJK unified ideographs
        0xA000...0xA4CF,    // Yi
        0xA960...0xA97F,    // Hangul Jamo extended A
        0xAC00...0xD7A3,    // Hangul syllables
        0xF900...0xFAFF,    // CJK compatibility ideographs
        0xFE10...0xFE19,    // vertical forms
        0xFE30...0xFE6F,    // CJK compatibility forms, small form variants
        0xFF00...0xFF60,    // fullwidth forms
        0xFFE0...0xFFE6,    // fullwidth signs
        0x16FE0...0x16FE4,  // ideographic symbols
        0x17000...0x18CFF,  // Tangut, Khitan
        0x1B000...0x1B2FF,  // kana supplement and extensions, Nushu
        0x1F200...0x1F2FF,  // enclosed ideographic supplement
        0x20000...0x2FFFD,  // CJK extensions B–F, compatibility supplement
        0x30000...0x3FFFD,  // CJK extensions G, H
    ]
}
