"""Number-aware exact match and the grading judge's verdict in more forms (C3PO §3 grading).

A false exact match grades an answer right without asking the judge, and a misread verdict grades it right or wrong
on a word the judge did not mean: both become false findings. So whatever is in doubt stays apart (an exact match
that is not one only costs a judge call) or unparsed (None, counted and reported)."""

import random

import pytest

from omniaudit.answer_match import exact_match, normalize
from omniaudit.evaluation.composition.grading import grade, unparsed_verdicts
from omniaudit.evaluation.composition.verdicts import JUDGE_PROMPT, parse_verdict

# ------------------------------------------------------------------------- an independent spelling of numbers
_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_ORDINAL_ONES = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
                 "nine": "ninth", "twelve": "twelfth"}


def words(n: int, hyphen: bool = True, and_: bool = False) -> str:
    """English words of 0 <= n < 10**9 ("twenty-one", "one hundred five" or "one hundred and five")."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return _TENS[tens] + (("-" if hyphen else " ") + _ONES[ones] if ones else "")
    for size, name in ((10**6, "million"), (1000, "thousand"), (100, "hundred")):
        if n >= size:
            high, low = divmod(n, size)
            rest = f" {'and ' if and_ and low < 100 else ''}{words(low, hyphen, and_)}" if low else ""
            return f"{words(high, hyphen, and_)} {name}{rest}"
    raise ValueError(n)


def ordinal_words(n: int) -> str:
    """English ordinal words of 1 <= n < 100 ("twenty-first", "fortieth")."""
    cardinal = words(n)
    head, _, last = cardinal.rpartition("-")
    last = _ORDINAL_ONES.get(last) or (last[:-1] + "ieth" if last.endswith("y") else last + "th")
    return f"{head}-{last}" if head else last


def ordinal_digits(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def chinese(n: int) -> str:
    """The Chinese numeral of 0 < n < 10000, written the standard way (十五, 一百零五, 一千零五十)."""
    digits, out, zero = "零一二三四五六七八九", "", False
    for unit, name in ((1000, "千"), (100, "百"), (10, "十"), (1, "")):
        d = n // unit % 10
        if d:
            out += ("零" if zero else "") + digits[d] + name
            zero = False
        elif out:
            zero = True
    return out[1:] if out.startswith("一十") else out


RANDOM = random.Random(20240917)
INTEGERS = sorted({*range(0, 25), 99, 100, 101, 110, 999, 1000, 1001, 10**6, *RANDOM.sample(range(1, 10**6), 300)})


# ------------------------------------------------------------------------------------------- exact match
@pytest.mark.parametrize(("prediction", "answer"), [("-5", "five"), ("-5", "5"), ("minus five", "5"), ("−5", "5"),
                                                    ("-0.5", "0.5"), ("-5 °C", "5 °C"), ("(-3)", "3")])
def test_a_minus_sign_is_not_dropped(prediction, answer):
    assert not exact_match(prediction, answer) and not exact_match(answer, prediction)


@pytest.mark.parametrize(("prediction", "answer"), [("−5", "-5"), ("minus five", "-5"), ("negative 5", "-5"),
                                                    ("–5", "-5"), ("(-5)", "-5")])
def test_a_typeset_or_spelled_minus_is_a_minus(prediction, answer):
    assert exact_match(prediction, answer)


@pytest.mark.parametrize(("prediction", "answer", "same"), [
    ("2.5", "25", False), ("2.5", "2 5", False), ("1. 5", "1.5", False), ("2.50", "2.5", False),
    ("3.10", "3.1", False), ("0.5", ".5", True), ("2.5", "2.5.", True), ("1.000", "1000", False),
])
def test_a_decimal_point_is_not_dropped(prediction, answer, same):
    assert exact_match(prediction, answer) is same


@pytest.mark.parametrize(("prediction", "answer", "same"), [
    ("2/5", "2.5", False), ("2/5", "25", False), ("2/5", "0.4", False), ("2/5", "4/10", False), ("2/5", "5/2", False),
    ("2/5", "2/5", True), ("½", "1/2", True), ("2½", "21/2", False), ("2½", "2 1/2", True), ("1⁄2", "1/2", True),
])
def test_fractions_are_compared_as_written_not_by_value(prediction, answer, same):
    # a slash may be a date, a score or a ratio: 2/5 is not 0.4 nor 4/10 here; the judge decides those
    assert exact_match(prediction, answer) is same


@pytest.mark.parametrize(("prediction", "answer", "same"), [
    ("1,000", "1000", True), ("1,000,000", "1000000", True), ("1,234.5", "1234.5", True), ("2,500", "2500", True),
    ("1,5", "15", False), ("1,5", "1.5", False), ("10,00", "1000", False), ("2,5", "25", False), ("1,5", "1,5", True),
])
def test_digit_grouping_is_removed_and_an_ambiguous_comma_kept(prediction, answer, same):
    assert exact_match(prediction, answer) is same
    assert exact_match(answer, prediction) is same


@pytest.mark.parametrize(("prediction", "answer", "same"), [
    ("three", "3", True), ("Twenty-one", "21", True), ("twenty one", "21", True),
    ("one hundred and five", "105", True), ("a thousand", "1,000", True), ("5 million", "5000000", True),
    ("1.5 million", "1500000", True),
    ("two million five hundred thousand", "2500000", True), ("ＴＨＲＥＥ", "3", True), ("zero", "0", True),
    ("two three", "23", False), ("one twenty", "120", False), ("fifteen", "50", False), ("thirteen", "30", False),
    ("four", "for", False), ("to", "two", False),
])
def test_number_words_are_digits(prediction, answer, same):
    assert exact_match(prediction, answer) is same


@pytest.mark.parametrize(("prediction", "answer", "same"), [
    ("tres", "3", True), ("三", "3", True), ("drei", "3", True), ("trois", "3", True), ("fünf", "5", True),
    ("dreißig", "30", True), ("veintidós", "22", True), ("treinta y dos", "32", True), ("einundzwanzig", "21", True),
    ("siebzehn", "17", True), ("vingt et un", "21", True), ("dix-sept", "17", True), ("soixante-dix", "70", True),
    ("quatre-vingt-dix-neuf", "99", True), ("二十一", "21", True), ("一百零五", "105", True), ("十万", "100000", True),
    ("一九八四", "1984", True),
    # words that are also English words, or articles, are no numbers
    ("once", "11", False), ("quince", "15", False), ("elf", "11", False), ("sept", "7", False), ("un", "1", False),
    ("cent", "100", False), ("一千五", "1005", False), ("三个", "3", False),
])
def test_spanish_german_french_and_chinese_numbers(prediction, answer, same):
    assert exact_match(prediction, answer) is same


@pytest.mark.parametrize(("prediction", "answer", "same"), [
    ("3 kg", "3 g", False), ("3 kg", "3", False), ("3kg", "3 kg", True), ("3 KG", "3 kg", True),
    ("3 kilograms", "3 kg", True), ("5 km", "5 m", False), ("50%", "50", False), ("50 percent", "50%", True),
    ("50 per cent", "50 %", True), ("$5", "5", False), ("$5", "€5", False), ("90°", "90", False),
    ("100 °C", "100 °F", False), ("10³", "103", False), ("10²", "10^2", True), ("m²", "m2", False),
    ("1 second", "2nd", False), ("90s", "90 s", False),
])
def test_units_and_symbols_are_kept_apart(prediction, answer, same):
    assert exact_match(prediction, answer) is same


@pytest.mark.parametrize(("prediction", "answer", "same"), [
    ("3rd", "third", True), ("21st", "twenty-first", True), ("the second", "2nd", True), ("第三", "3rd", True),
    ("第3", "third", True), ("troisième", "3rd", True), ("tercero", "3rd", True), ("dritte", "3rd", True),
    ("one hundredth", "100th", True), ("3rd", "3", False), ("first", "1", False), ("1st", "2nd", False),
])
def test_ordinals_match_their_words_but_not_the_cardinal(prediction, answer, same):
    assert exact_match(prediction, answer) is same


@pytest.mark.parametrize(("prediction", "answer", "same"), [
    ("a dog", "dog", True), ("An apple", "apple", True), ("The Eiffel Tower", "eiffel tower", True),
    ("vitamin", "vitamin A", False), ("Vitamin A", "vitamin a", True), ("plan", "Plan B", False),
    ("A B", "B", False), ("A", "an", False), ("a 5", "5", False),
    ("el perro", "perro", True), ("la maison", "maison", True), ("l'eau", "eau", True), ("une pomme", "pomme", True),
    ("ein Hund", "Hund", True), ("die Katze", "Katze", True), ("das Boot", "Boot", True),
    ("El Salvador", "Salvador", False), ("Los Angeles", "Angeles", False), ("La Paz", "Paz", False),
    ("Les Paul", "Paul", False), ("L'Oréal", "Oréal", False), ("Die Hard", "Hard", False),
    ("UN Security Council", "Security Council", False), ("LA Lakers", "Lakers", False),
])
def test_articles_are_dropped_only_where_they_cannot_be_content(prediction, answer, same):
    assert exact_match(prediction, answer) is same


@pytest.mark.parametrize(("prediction", "answer", "same"), [
    ("C++", "C", False), ("C#", "C", False), ("A-", "A", False), ("A+", "A", False), ("B+", "B-", False),
    ("# Paris", "Paris", True), ("**Paris.**", "paris", True), ("  Paris!  ", "PARIS", True), ("U.S.A.", "USA", True),
    ("Tom & Jerry", "tom and jerry", True), ("COVID-19", "covid 19", True), ("non-toxic", "toxic", False),
    ("3:00", "300", False), ("3-1", "31", False),
])
def test_meaningful_punctuation_and_symbols_stay(prediction, answer, same):
    assert exact_match(prediction, answer) is same


def test_callers_normalised_strings_are_unchanged_for_plain_answers():
    assert normalize("The  Red, Square.") == "red square"
    assert normalize("I don't know.") == "i don t know"
    assert normalize("A") == "a" and normalize("The") == "the"  # an article alone is the answer
    assert normalize("...") == "..."  # punctuation alone does not normalise to nothing
    assert not exact_match("", "") and not exact_match("", "Paris")


@pytest.mark.parametrize("n", INTEGERS)
def test_every_integer_matches_its_words_and_grouping_but_never_its_neighbours(n):
    spelled = [words(n), words(n, hyphen=False), words(n, and_=True)] if n < 10**9 else []
    for form in [*spelled, f"{n:,}", f"The {n}"]:
        assert exact_match(form, str(n)), form
        assert exact_match(str(n), form), form
    for other in (str(n + 1), words(n + 1), f"{n + 1:,}", f"{n}.5", f"{n}/2", f"{n} kg", f"{n}%"):
        assert not exact_match(str(n), other), other
        assert not exact_match(words(n), other), other
    if n:
        for negative in (f"-{n}", f"−{n}", f"minus {words(n)}"):
            assert not exact_match(negative, str(n)) and not exact_match(negative, words(n)), negative
            assert exact_match(negative, f"-{n}"), negative


@pytest.mark.parametrize("n", [n for n in INTEGERS if 0 < n < 10000])
def test_chinese_numerals_match_digits(n):
    assert exact_match(chinese(n), str(n)) and not exact_match(chinese(n), str(n + 1))


@pytest.mark.parametrize("n", range(1, 100))
def test_every_ordinal_word_matches_its_digits_only(n):
    assert exact_match(ordinal_words(n), ordinal_digits(n))
    assert not exact_match(ordinal_words(n), str(n)) and not exact_match(ordinal_digits(n), ordinal_digits(n + 1))


def test_decimals_and_fractions_never_collapse_into_integers():
    rng = random.Random(7)
    for _ in range(300):
        a, b = rng.randrange(1, 1000), rng.randrange(1, 1000)
        assert not exact_match(f"{a}.{b}", f"{a}{b}")
        assert not exact_match(f"{a}/{b}", f"{a}.{b}") and not exact_match(f"{a}/{b}", f"{a}{b}")
        assert not exact_match(f"-{a}.{b}", f"{a}.{b}")
        assert exact_match(f"{a}.{b}", f" {a}.{b}. ") and exact_match(f"{a}/{b}", f"{a}/{b}")


# ------------------------------------------------------------------------------------------------ verdicts
@pytest.mark.parametrize(("text", "verdict"), [
    ('{"verdict": "yes"}', "Yes"), ('{"verdict": "No"}', "No"), ('{"correct": true}', "Yes"),
    ('{"correct": false}', "No"),
    ('```json\n{"is_correct": false, "reasoning": "both are correct cities"}\n```', "No"),
    ("{'verdict': 'Yes'}", "Yes"), ('{"is_different": true}', "No"), ('{"same_entity": "yes"}', "Yes"),
    ('{"result": {"verdict": "no"}}', "No"), ('{"ground_truth": "no", "prediction": "yes", "verdict": "yes"}', "Yes"),
    ('Here is my verdict: {"verdict": "no"}', "No"),
    ('{"verdict": "maybe"}', None), ('{"verdict": "yes", "correct": false}', None), ('{"confidence": 0.9}', None),
    ('{"correct": 1}', None), ('{"verdict": "Yes"} Actually, no.', None),
    ("correct: false", "No"), ("is_correct = True", "Yes"), ("Answer: True", "Yes"), ("Final answer: false", "No"),
])
def test_json_and_field_verdicts_are_read_from_their_verdict_keys(text, verdict):
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize(("text", "verdict"), [
    ("[[Yes]]", "Yes"), ("[[No]]", "No"), ("Verdict: [[No]]", "No"), ("True", "Yes"), ("FALSE.", "No"),
    ("Y", "Yes"), ("n", "No"), ("(Y)", "Yes"), ("Correct", "Yes"), ("Incorrect.", "No"), ("Right.", "Yes"),
    ("Wrong!", "No"), ("<answer>Yes</answer>", "Yes"), ("No<|im_end|>", "No"), ("✅", "Yes"), ("❌", "No"),
    ("True, both name a rabbit.", "Yes"), ("Result: incorrect", "No"),
    ("True/False", None), ("True or false", None), ("Y/N", None), ("Correct/Incorrect", None), ("Yes?", None),
])
def test_bracketed_boolean_and_single_word_verdicts_are_read(text, verdict):
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize(("text", "verdict"), [
    ("Ja", "Yes"), ("Nein", "No"), ("Richtig", "Yes"), ("Falsch.", "No"), ("Ja, das ist dieselbe Stadt.", "Yes"),
    ("Nein, das sind verschiedene Tiere.", "No"), ("Das stimmt nicht.", "No"), ("Sie sind nicht gleich.", "No"),
    ("Es gibt keinen Unterschied.", "Yes"), ("Vielleicht.", None), ("Ja oder nein", None),
    ("Oui", "Yes"), ("Non", "No"), ("Vrai", "Yes"), ("Faux", "No"), ("Oui, c'est la même ville.", "Yes"),
    ("Non, ce n'est pas le même animal.", "No"), ("Ce n'est pas correct.", "No"),
    ("Ce sont des villes différentes.", "No"),
    ("Peut-être.", None), ("Oui ou non", None),
])
def test_german_and_french_verdicts_are_read(text, verdict):
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize(("text", "verdict"), [
    ("Correcto", "Yes"), ("Incorrecto.", "No"), ("No es la misma ciudad.", "No"), ("No es correcto.", "No"),
    ("No, no es el mismo animal.", "No"), ("No hay diferencia.", "Yes"), ("No coinciden.", "No"),
    ("对", "Yes"), ("错", "No"), ("正确", "Yes"), ("错误。", "No"), ("没错，两者相同。", "Yes"), ("不对", "No"),
    ("不错", None),  # "not bad": a litotes, not a verdict
])
def test_spanish_negation_and_chinese_right_and_wrong_are_read(text, verdict):
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize(("text", "verdict"), [
    ("Yes. Actually, no.", "No"), ("No. Actually, yes.", "Yes"), ("Yes. On second thought, no.", "No"),
    ("Yes, or rather no.", "No"), ("Yes, but actually no.", "No"),
    ("Yes... or maybe no", None), ("Yes, but no.", None), ("Yes, but also no.", None), ("Yes, wait, no.", None),
    ("Incorrect. Yes.", None), ("Correct. No.", None), ("No - wait, Yes", None), ("Yes. No.", None),
])
def test_a_reversal_is_read_only_with_a_final_commitment(text, verdict):
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize(("text", "verdict"), [
    ("Yes, probably.", None), ("Yes, but I'm not sure.", None), ("Yes, although I am not certain.", None),
    ("Partially correct.", None), ("Almost the same.", None), ("Mostly yes.", None), ("Yes, arguably.", None),
    ("No, the prediction is only partially correct.", None), ("Close enough.", None), ("I doubt they match.", None),
])
def test_hedged_verdicts_are_unparsed(text, verdict):
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize(("text", "verdict"), [
    ("not correct", "No"), ("The prediction is not correct.", "No"), ("Not equivalent.", "No"),
    ("not incorrect", None), ("The prediction is not incorrect.", None), ("That isn't wrong.", None),
    ("They aren't different.", "Yes"), ("They do not differ.", "Yes"), ("I don't think they're different.", "Yes"),
    ("I don't think they are the same.", "No"), ("There is no way they are the same.", "No"), ("No match.", "No"),
    ("The prediction fails to match.", "No"), ("not-equivalent", "No"), ("Non-equivalent.", "No"),
    ("It is true that they differ.", None), ("Not only the same city but the same district.", "Yes"),
])
def test_negations_are_read_and_a_double_negative_of_a_judgement_is_doubt(text, verdict):
    # "not incorrect" / "not wrong" often means "acceptable, though not quite": read as doubt, never as a Yes
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize(("text", "verdict"), [
    ("Are they different? No.", "Yes"), ("Is the prediction incorrect? Yes.", "No"), ("Different? Answer: yes", "No"),
    ("Is the prediction correct? No.", "No"), ("Correct? No.", "No"), ("Same entity? Yes.", "Yes"),
    ("Isn't it the same? No.", None), ("Are they not different? Yes.", None),
])
def test_a_verdict_answers_the_question_the_judge_asked_itself(text, verdict):
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize("text", [
    "\ufffd\ufffd\x01 yes", "Yes\x00\x07", "xq zzk pwt qrst", "???", "Yes Yes Yes", "No. No. No.", "yes yes yes yes",
    "Question: Which animal?\nGround-truth answer: No\nPredicted answer: hare",
    JUDGE_PROMPT.format(question="Is it?", answer="Yes", prediction="No"), "   ", "",
])
def test_noise_repetition_and_echoes_are_unparsed(text):
    assert parse_verdict(text) is None


def test_an_echoed_prompt_does_not_hide_the_verdict_after_it():
    assert parse_verdict("Answer with exactly one of: Yes, No.\nYes") == "Yes"
    echoed = JUDGE_PROMPT.format(question="Which animal?", answer="rabbit", prediction="bunny")
    assert parse_verdict(f"{echoed}\nNo") == "No"


@pytest.mark.parametrize("word", ["Yes", "No"])
@pytest.mark.parametrize("wrap", ["{}", "**{}**", "[[{}]]", "({})", "{}.", "  {}!  ", "Answer: {}", "Verdict: {}",
                                  "<answer>{}</answer>", '{{"verdict": "{}"}}', "Final answer: **{}**"])
def test_a_verdict_reads_the_same_in_any_wrapping(word, wrap):
    assert parse_verdict(wrap.format(word)) == word
    assert parse_verdict(wrap.format(word.upper())) == word


def test_grading_asks_the_judge_for_near_misses_and_counts_their_unread_verdicts(monkeypatch):
    import pandas as pd

    class Judge:
        def answer(self, items, progress=None):
            return ["Yes... or maybe no", "Ja", "Non, ce n'est pas le même animal."][:len(items)]

    monkeypatch.setattr("omniaudit.runners.make_judge", lambda spec, **kw: Judge())
    samples = pd.DataFrame({"id": list("abcdef"), "template_name": "T", "category": "IC", "tier": 2,
                            "question": "How many?", "answer": ["5", "2.5", "vitamin A", "3 kg", "three", "1,000"]})
    predictions = pd.DataFrame({"id": list("abcdef"), "prediction": ["-5", "2/5", "vitamin", "3 g", "3", "1000"]})
    graded = grade(samples, predictions, "fake:judge")
    assert graded["exact"].tolist() == [False, False, False, False, True, True]  # no false exact match
    # "-5" for 5 is a count read and wrong (no judge call); "2/5" states two numbers: the judge is asked
    assert graded["read_by"].tolist() == ["closed", "judge", "judge", "judge", "exact", "exact"]
    assert graded["judge_says"].tolist() == [None, None, "Yes", "No", None, None]
    assert graded["correct"].tolist() == [False, False, True, False, True, True]
    assert unparsed_verdicts(graded) == 1


@pytest.mark.parametrize(("raw", "verdict"), [
    ("It is not the case that they name the same thing.", "No"),
    ("It's not true that they are different.", "Yes"),
    ("It is untrue that both answers refer to one city.", "No"),
])
def test_a_claim_framed_as_not_the_case_is_turned_over(raw, verdict):
    assert parse_verdict(raw) == verdict
