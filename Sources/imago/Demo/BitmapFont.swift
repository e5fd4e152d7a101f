/// A 5×7 pixel font for the contact sheet's captions: lowercase letters, digits and a little
/// punctuation (capitals are drawn as lowercase, anything else as `?`). Each glyph is seven rows,
/// top first, each a base-32 digit whose five bits are the row's pixels, left first.
enum BitmapFont {
    static let width = 5
    static let height = 7
    /// Pixels from one character's left edge to the next one's.
    static let advance = 6

    private static let digits = Array("0123456789abcdefghijklmnopqrstuv")

    private static let glyphs: [Character: String] = [
        " ": "0000000",
        "%": "pp248jj",
        "(": "2488842",
        ")": "8422248",
        "+": "044v440",
        ",": "0000c48",
        "-": "000v000",
        ".": "00000cc",
        "/": "11248gg",
        "0": "ehjlphe",
        "1": "4c4444e",
        "2": "eh1248v",
        "3": "u11e11u",
        "4": "26aiv22",
        "5": "vgu11he",
        "6": "egguhhe",
        "7": "v124888",
        "8": "ehhehhe",
        "9": "ehhf11e",
        ":": "0cc0cc0",
        "=": "00v0v00",
        "?": "eh12404",
        "@": "ehnlnge",
        "_": "000000v",
        "a": "00e1fhf",
        "b": "gguhhhu",
        "c": "00fgggf",
        "d": "11fhhhf",
        "e": "00ehvge",
        "f": "68u8888",
        "g": "0fhhf1e",
        "h": "gguhhhh",
        "i": "40c444e",
        "j": "20622ic",
        "k": "ggikoki",
        "l": "c44444e",
        "m": "00qllll",
        "n": "00uhhhh",
        "o": "00ehhhe",
        "p": "0uhhugg",
        "q": "0fhhf11",
        "r": "00moggg",
        "s": "00fge1u",
        "t": "88u8886",
        "u": "00hhhhf",
        "v": "00hhha4",
        "w": "00hllla",
        "x": "00ha4ah",
        "y": "0hhhf1e",
        "z": "00v248v",
    ]

    /// Whether the pixel at (`x`, `y`) of `character`'s glyph is set.
    static func isSet(_ character: Character, x: Int, y: Int) -> Bool {
        let code = glyphs[Character(character.lowercased())] ?? glyphs["?"] ?? ""
        guard x >= 0, x < width, y >= 0, y < height, let row = Array(code).dropFirst(y).first,
            let bits = digits.firstIndex(of: row)
        else { return false }
        return bits & (1 << (width - 1 - x)) != 0
    }

    /// `text` cut to at most `maxWidth` pixels, with `…` drawn as `..` when cut.
    static func fitted(_ text: String, maxWidth: Int) -> String {
        let fits = max(0, maxWidth / advance)
        guard text.count > fits else { return text }
        return String(text.prefix(max(0, fits - 2))) + ".."
    }
}
