"""Facts the choice and free-form generators ask about, as data: one Relation per kind of fact,
with several ways to ask it. The wrong answers for a fact are the other answers of its relation
(other capitals, other years), which is what makes them plausible."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Relation:
    key: str  # names the kind of fact in `meta["kind"]`
    subject: str
    questions: tuple[str, ...]  # templates with {x}
    pairs: tuple[tuple[str, str], ...]  # (x, answer)


RELATIONS: tuple[Relation, ...] = (
    Relation("capital", "geography", (
        "What is the capital of {x}?", "Which city is the capital of {x}?", "Name the capital city of {x}.",
        "{x}'s seat of government is in which city?", "The government of {x} sits in which city?",
        "If you flew to the capital of {x}, where would you land?",
    ), (
        ("France", "Paris"), ("Japan", "Tokyo"), ("Canada", "Ottawa"), ("Australia", "Canberra"),
        ("Brazil", "Brasília"), ("Kenya", "Nairobi"), ("Egypt", "Cairo"), ("Norway", "Oslo"),
        ("Argentina", "Buenos Aires"), ("Turkey", "Ankara"), ("Vietnam", "Hanoi"), ("Peru", "Lima"),
        ("Poland", "Warsaw"), ("Portugal", "Lisbon"), ("Morocco", "Rabat"), ("New Zealand", "Wellington"),
        ("Nigeria", "Abuja"), ("Switzerland", "Bern"), ("South Korea", "Seoul"), ("Chile", "Santiago"),
        ("Ireland", "Dublin"), ("Thailand", "Bangkok"), ("Hungary", "Budapest"), ("Finland", "Helsinki"),
    )),
    Relation("currency", "economics", (
        "What is the currency of {x}?", "Which currency is used in {x}?", "Shops in {x} price goods in which currency?",
        "A traveller to {x} needs which currency?", "Name the official currency of {x}.",
    ), (
        ("Japan", "yen"), ("India", "rupee"), ("Mexico", "peso"), ("Russia", "ruble"), ("South Korea", "won"),
        ("Brazil", "real"), ("South Africa", "rand"), ("Thailand", "baht"), ("Turkey", "lira"),
        ("Sweden", "krona"), ("Israel", "shekel"), ("Vietnam", "dong"), ("Poland", "zloty"),
        ("the United Kingdom", "pound sterling"), ("Switzerland", "Swiss franc"), ("China", "renminbi"),
    )),
    Relation("element_symbol", "chemistry", (
        "What is the chemical symbol for {x}?", "Which symbol stands for {x} on the periodic table?",
        "On the periodic table, {x} is written as what?", "Give the element symbol of {x}.",
        "How is {x} abbreviated in chemical formulas?",
    ), (
        ("gold", "Au"), ("silver", "Ag"), ("iron", "Fe"), ("sodium", "Na"), ("potassium", "K"), ("lead", "Pb"),
        ("copper", "Cu"), ("tin", "Sn"), ("mercury", "Hg"), ("tungsten", "W"), ("antimony", "Sb"),
        ("calcium", "Ca"), ("chlorine", "Cl"), ("magnesium", "Mg"), ("zinc", "Zn"), ("helium", "He"),
        ("neon", "Ne"), ("sulfur", "S"), ("phosphorus", "P"), ("nitrogen", "N"),
    )),
    Relation("atomic_number", "chemistry", (
        "What is the atomic number of {x}?", "How many protons are in the nucleus of a {x} atom?",
        "Which atomic number does {x} have?", "An atom of {x} has how many protons?",
    ), (
        ("hydrogen", "1"), ("helium", "2"), ("carbon", "6"), ("nitrogen", "7"), ("oxygen", "8"), ("neon", "10"),
        ("sodium", "11"), ("aluminium", "13"), ("silicon", "14"), ("chlorine", "17"), ("argon", "18"),
        ("calcium", "20"), ("iron", "26"), ("copper", "29"), ("zinc", "30"), ("silver", "47"), ("gold", "79"),
        ("uranium", "92"), ("lithium", "3"), ("magnesium", "12"),
    )),
    Relation("si_unit", "physics", (
        "What is the SI unit of {x}?", "In SI units, {x} is measured in what?", "Which unit measures {x} in the SI system?",
        "A physicist reports {x}. In which SI unit?", "Name the SI derived or base unit for {x}.",
    ), (
        ("force", "newton"), ("energy", "joule"), ("power", "watt"), ("pressure", "pascal"),
        ("electric charge", "coulomb"), ("electrical resistance", "ohm"), ("frequency", "hertz"),
        ("electric current", "ampere"), ("electric potential difference", "volt"),
        ("magnetic flux density", "tesla"), ("capacitance", "farad"), ("inductance", "henry"),
        ("thermodynamic temperature", "kelvin"), ("amount of substance", "mole"),
        ("luminous intensity", "candela"), ("magnetic flux", "weber"),
    )),
    Relation("event_year", "history", (
        "In what year did {x}?", "In which year did {x}?", "When, to the year, did {x}?",
        "Which year did {x}?", "Tell me the year: when did {x}?",
    ), (
        ("the Apollo 11 crew first land on the Moon", "1969"), ("the Berlin Wall fall", "1989"),
        ("the First World War begin", "1914"), ("the Second World War end", "1945"),
        ("the storming of the Bastille take place", "1789"), ("the United States declare independence", "1776"),
        ("Columbus first reach the Americas", "1492"), ("King John seal the Magna Carta", "1215"),
        ("the Battle of Hastings take place", "1066"), ("the Titanic sink", "1912"),
        ("the Ottomans capture Constantinople", "1453"), ("Martin Luther post his Ninety-five Theses", "1517"),
        ("the Battle of Waterloo take place", "1815"), ("the American Civil War begin", "1861"),
        ("the Chernobyl disaster happen", "1986"), ("the Soviet Union dissolve", "1991"),
        ("Sputnik 1 reach orbit", "1957"), ("the Treaty of Versailles get signed", "1919"),
        ("the Wall Street Crash happen", "1929"), ("the Russian Revolution take place", "1917"),
    )),
    Relation("author", "literature", (
        "Who wrote {x}?", "{x} is the work of which author?", "Name the author of {x}.",
        "Which writer is credited with {x}?", "Whose book is {x}?",
    ), (
        ("Pride and Prejudice", "Jane Austen"), ("Nineteen Eighty-Four", "George Orwell"),
        ("War and Peace", "Leo Tolstoy"), ("Don Quixote", "Miguel de Cervantes"), ("Moby-Dick", "Herman Melville"),
        ("Crime and Punishment", "Fyodor Dostoevsky"), ("The Great Gatsby", "F. Scott Fitzgerald"),
        ("One Hundred Years of Solitude", "Gabriel García Márquez"), ("Frankenstein", "Mary Shelley"),
        ("The Divine Comedy", "Dante Alighieri"), ("Les Misérables", "Victor Hugo"),
        ("To Kill a Mockingbird", "Harper Lee"), ("Brave New World", "Aldous Huxley"),
        ("Things Fall Apart", "Chinua Achebe"), ("The Trial", "Franz Kafka"), ("Hamlet", "William Shakespeare"),
        ("Jane Eyre", "Charlotte Brontë"), ("Madame Bovary", "Gustave Flaubert"),
    )),
    Relation("organelle", "biology", (
        "Which organelle {x}?", "In a eukaryotic cell, which structure {x}?", "Name the cell part that {x}.",
        "Which cellular component {x}?",
    ), (
        ("carries out aerobic respiration and makes most of the cell's ATP", "mitochondrion"),
        ("performs photosynthesis in plant cells", "chloroplast"), ("synthesizes proteins from mRNA", "ribosome"),
        ("modifies, sorts and packages proteins for secretion", "Golgi apparatus"),
        ("holds most of the cell's DNA", "nucleus"), ("digests worn-out organelles with enzymes", "lysosome"),
        ("controls what enters and leaves the cell", "cell membrane"),
        ("stores water and maintains turgor pressure in plant cells", "central vacuole"),
        ("organizes the spindle fibres in animal cell division", "centrosome"),
        ("makes lipids and detoxifies drugs", "smooth endoplasmic reticulum"),
    )),
    Relation("organ", "biology", (
        "Which organ {x}?", "In the human body, which organ {x}?", "Name the organ that {x}.",
        "What part of the human body {x}?",
    ), (
        ("produces insulin", "pancreas"), ("makes bile", "liver"), ("filters blood to form urine", "kidney"),
        ("pumps blood through the body", "heart"), ("stores bile", "gallbladder"),
        ("exchanges oxygen and carbon dioxide with the air", "lungs"), ("absorbs most nutrients from food", "small intestine"),
        ("absorbs most of the water from digested food", "large intestine"),
        ("removes old red blood cells and stores platelets", "spleen"), ("produces thyroxine", "thyroid"),
    )),
    Relation("legal_term", "law", (
        "What is the legal term for {x}?", "In law, {x} is called what?", "Which legal term means {x}?",
        "A lawyer would call {x} what?", "Name the legal concept: {x}.",
    ), (
        ("a court order to bring a detained person before a judge", "habeas corpus"),
        ("being tried twice for the same offence", "double jeopardy"),
        ("a civil wrong, other than a breach of contract, that causes harm", "tort"),
        ("the party who brings a civil lawsuit", "plaintiff"), ("a written statement sworn under oath", "affidavit"),
        ("an order compelling a person to testify", "subpoena"), ("lying under oath", "perjury"),
        ("defamation in written or published form", "libel"), ("defamation in spoken form", "slander"),
        ("a court order that requires or forbids an act", "injunction"),
        ("the time limit for starting legal proceedings", "statute of limitations"),
        ("the mental element of a crime, the guilty mind", "mens rea"),
        ("the physical element of a crime, the guilty act", "actus reus"),
        ("the doctrine that courts follow earlier decisions", "stare decisis"),
        ("a verdict that the accused is not guilty", "acquittal"),
    )),
    Relation("economic_term", "economics", (
        "What is the economic term for {x}?", "Economists call {x} what?", "Which term describes {x}?",
        "In economics, {x} is known as what?",
    ), (
        ("a general rise in the price level over time", "inflation"), ("a general fall in the price level", "deflation"),
        ("the value of the best alternative given up", "opportunity cost"), ("a market with a single seller", "monopoly"),
        ("a market dominated by a few large sellers", "oligopoly"), ("a tax on imported goods", "tariff"),
        ("a cost or benefit that falls on a third party", "externality"),
        ("government spending and taxation used to steer the economy", "fiscal policy"),
        ("central bank control of interest rates and money supply", "monetary policy"),
        ("the ability to produce a good at a lower opportunity cost than others", "comparative advantage"),
        ("how easily an asset can be turned into cash", "liquidity"),
        ("a market with a single buyer", "monopsony"),
    )),
    Relation("data_structure", "computer science", (
        "Which data structure {x}?", "Name the data structure that {x}.", "What do programmers call a structure that {x}?",
        "Which abstract data type {x}?",
    ), (
        ("removes items in first-in, first-out order", "queue"), ("removes items in last-in, first-out order", "stack"),
        ("always gives quick access to its smallest or largest element", "heap"),
        ("maps keys to values through a hash function", "hash table"),
        ("links each element to the next through a pointer", "linked list"),
        ("keeps keys ordered so that left children are smaller and right children larger", "binary search tree"),
        ("stores a set of vertices and the edges between them", "graph"),
        ("stores strings character by character so that common prefixes are shared", "trie"),
    )),
    Relation("planet", "astronomy", (
        "Which planet {x}?", "In our solar system, which planet {x}?", "Name the planet that {x}.",
        "Which planet of the solar system {x}?",
    ), (
        ("is the largest", "Jupiter"), ("is closest to the Sun", "Mercury"), ("is called the Red Planet", "Mars"),
        ("has the hottest surface", "Venus"), ("is farthest from the Sun", "Neptune"),
        ("rotates on its side, with an axial tilt near 98 degrees", "Uranus"),
        ("has the most prominent ring system", "Saturn"), ("is the only one known to host life", "Earth"),
    )),
)
