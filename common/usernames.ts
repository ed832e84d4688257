// The form usernames are compared in: PRECIS UsernameCaseMapped (RFC 8265 §3.3), so `Casey`, `casey` and `ＣＡＳＥＹ`
// are one name. No maintained npm package implements PRECIS (saslprep is RFC 4013's stringprep profile, which keeps
// case), and the profile's mappings are three Unicode operations that the platform ships; see docs/decisions.md
// "Usernames: one person per name, whatever its case".

/**
 * The Halfwidth and Fullwidth Forms block and the ideographic space: the code points whose decomposition mapping is
 * <wide> or <narrow>, which the width mapping rule replaces by that mapping.
 */
const WIDTH_FORMS = /[\u3000\uFF01-\uFFEE]/gu;

/** The username's comparison form: width mapping, then lowercase (Unicode toLowerCase, §3.3.3 rule 3), then NFC. */
export const foldUsername = (username: string): string =>
  username
    .replace(WIDTH_FORMS, (c) => c.normalize('NFKC'))
    .toLowerCase()
    .normalize('NFC');
