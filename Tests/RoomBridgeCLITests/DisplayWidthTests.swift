import Testing
@testable import RoomBridgeCLI

@Suite struct DisplayWidthTests {
    @Test func asciiAndLatinTakeOneColumnEach() {
        #expect(DisplayWidth.of("Aiko Tanaka") == 11)
        #expect(DisplayWidth.of("Zoë Müller") == 10)
        #expect(DisplayWidth.of("") == 0)
    }

    @Test func kanjiKanaAndHangulAreWide() {
        #expect(DisplayWidth.of("山田太郎") == 8)
        #expect(DisplayWidth.of("たなか アイコ") == 13)
        #expect(DisplayWidth.of("김민준") == 6)
    }

    @Test func fullwidthFormsAreWideAndHalfwidthKatakanaNarrow() {
        #expect(DisplayWidth.of("ＡＢＣ１２３") == 12)
        #expect(DisplayWidth.of("ﾔﾏﾀﾞ") == 4)
        #expect(DisplayWidth.of("（株）") == 6)
    }

    @Test func combiningMarksTakeNoColumn() {
        #expect(DisplayWidth.of("e\u{0301}") == 1)
        #expect(DisplayWidth.of("か\u{3099}") == 2)
    }

    @Test func emojiShownAsEmojiAreWide() {
        #expect(DisplayWidth.of("📱") == 2)
        #expect(DisplayWidth.of("❤\u{FE0F}") == 2)
    }

    @Test func padFillsToTheDisplayWidth() {
        #expect(DisplayWidth.pad("山田", to: 6) == "山田  ")
        #expect(DisplayWidth.pad("Ben", to: 6) == "Ben   ")
        #expect(DisplayWidth.pad("山田太郎", to: 4) == "山田太郎")
    }
}
