"""The demo campaign's text: 60 German sentences in six documents, each with two English
reference translations (written for EvalSite; no third-party corpus)."""

from __future__ import annotations

# (document id, [(German source, English reference A, English reference B), ...])
DEMO_DOCUMENTS: list[tuple[str, list[tuple[str, str, str]]]] = [
    (
        "weather-report",
        [
            (
                "Am Wochenende wird es im Norden des Landes stürmisch.",
                "The north of the country will be stormy at the weekend.",
                "It will be stormy in the north of the country over the weekend.",
            ),
            (
                "Die Temperaturen fallen in der Nacht auf bis zu minus fünf Grad.",
                "Temperatures will drop to as low as minus five degrees during the night.",
                "At night the temperatures fall to minus five degrees.",
            ),
            (
                "Im Süden bleibt es dagegen überwiegend sonnig und trocken.",
                "In the south, by contrast, it will stay mostly sunny and dry.",
                "The south, however, remains largely sunny and dry.",
            ),
            (
                "Der Wetterdienst warnt vor Glätte auf den Straßen.",
                "The weather service warns of icy roads.",
                "The weather service is warning about slippery roads.",
            ),
            (
                "Autofahrer sollten am Montagmorgen mehr Zeit einplanen.",
                "Drivers should allow more time on Monday morning.",
                "Motorists should plan extra time on Monday morning.",
            ),
            (
                "An der Küste sind Böen mit bis zu hundert Kilometern pro Stunde möglich.",
                "Gusts of up to one hundred kilometres per hour are possible on the coast.",
                "On the coast, gusts of up to a hundred kilometres an hour may occur.",
            ),
            (
                "Mehrere Fähren haben ihren Betrieb bereits eingestellt.",
                "Several ferries have already suspended their service.",
                "Several ferries have already stopped running.",
            ),
            (
                "Ab Mittwoch soll es wieder milder werden.",
                "It is expected to become milder again from Wednesday.",
                "From Wednesday it should get milder again.",
            ),
            (
                "Dann steigen die Temperaturen auf bis zu zehn Grad.",
                "Temperatures will then rise to as much as ten degrees.",
                "Then the temperatures will climb to up to ten degrees.",
            ),
            (
                "Für die Skigebiete in den Alpen wird viel Neuschnee erwartet.",
                "A lot of fresh snow is expected in the ski resorts of the Alps.",
                "The ski areas in the Alps are expecting plenty of new snow.",
            ),
        ],
    ),
    (
        "rail-travel",
        [
            (
                "Der Zug nach Hamburg hat heute zwanzig Minuten Verspätung.",
                "The train to Hamburg is twenty minutes late today.",
                "Today the train to Hamburg is delayed by twenty minutes.",
            ),
            (
                "Grund dafür ist eine Störung an einem Stellwerk.",
                "The reason is a fault at a signal box.",
                "This is due to a malfunction at a signal box.",
            ),
            (
                "Reisende können ihre Fahrkarte kostenlos umtauschen.",
                "Passengers can exchange their ticket free of charge.",
                "Travellers may exchange their tickets at no cost.",
            ),
            (
                "Die Bahn empfiehlt, vor der Fahrt die Verbindung zu prüfen.",
                "The railway recommends checking the connection before travelling.",
                "The rail company advises passengers to check their connection before the journey.",
            ),
            (
                "Im Speisewagen gibt es heute nur kalte Getränke.",
                "Only cold drinks are available in the dining car today.",
                "Today the dining car is serving cold drinks only.",
            ),
            (
                "Der Anschlusszug in Hannover wartet nicht.",
                "The connecting train in Hanover will not wait.",
                "The connecting service at Hanover is not going to wait.",
            ),
            (
                "Fahrgäste mit Zeitkarten dürfen auch andere Züge benutzen.",
                "Passengers with season tickets may also use other trains.",
                "Season ticket holders are allowed to take other trains as well.",
            ),
            (
                "Am Bahnsteig sieben stehen Mitarbeiter für Fragen bereit.",
                "Staff are available for questions on platform seven.",
                "Employees are on hand to answer questions at platform seven.",
            ),
            (
                "Die Reservierungen bleiben für den späteren Zug gültig.",
                "Reservations remain valid for the later train.",
                "Seat reservations stay valid for the later train.",
            ),
            (
                "Wir bitten um Entschuldigung für die Unannehmlichkeiten.",
                "We apologise for the inconvenience.",
                "We are sorry for any inconvenience caused.",
            ),
        ],
    ),
    (
        "city-council",
        [
            (
                "Der Stadtrat hat am Dienstag einen neuen Haushalt beschlossen.",
                "The city council approved a new budget on Tuesday.",
                "On Tuesday the city council passed a new budget.",
            ),
            (
                "Für Schulen und Kindergärten gibt es deutlich mehr Geld.",
                "Schools and nurseries will receive considerably more money.",
                "There is significantly more money for schools and kindergartens.",
            ),
            (
                "Die Sanierung der alten Brücke beginnt im Frühjahr.",
                "Renovation of the old bridge will begin in the spring.",
                "Work to repair the old bridge starts in spring.",
            ),
            (
                "Während der Bauarbeiten wird eine Umleitung eingerichtet.",
                "A diversion will be set up during the construction work.",
                "A detour will be put in place while the work is under way.",
            ),
            (
                "Die Opposition kritisierte die hohen Kosten des Projekts.",
                "The opposition criticised the high cost of the project.",
                "The project's high costs were criticised by the opposition.",
            ),
            (
                "Der Bürgermeister verteidigte die Entscheidung in einer Rede.",
                "The mayor defended the decision in a speech.",
                "In a speech, the mayor defended the decision.",
            ),
            (
                "Außerdem sollen zweihundert neue Fahrradständer aufgestellt werden.",
                "In addition, two hundred new bicycle racks are to be installed.",
                "Two hundred new bike stands are also to be put up.",
            ),
            (
                "Die Gebühren für das Parken in der Innenstadt steigen leicht.",
                "Parking charges in the city centre will rise slightly.",
                "Fees for parking in the town centre are going up a little.",
            ),
            (
                "Viele Bürger hatten sich an der Umfrage beteiligt.",
                "Many citizens had taken part in the survey.",
                "A large number of residents had participated in the poll.",
            ),
            (
                "Die nächste Sitzung findet im März statt.",
                "The next meeting will take place in March.",
                "The council meets again in March.",
            ),
        ],
    ),
    (
        "football",
        [
            (
                "Die Mannschaft gewann das Heimspiel mit drei zu eins.",
                "The team won the home game three to one.",
                "The side won their home match 3-1.",
            ),
            (
                "Das erste Tor fiel bereits nach fünf Minuten.",
                "The first goal came after only five minutes.",
                "The opening goal was scored after just five minutes.",
            ),
            (
                "Nach der Pause spielten die Gäste deutlich besser.",
                "After the break the visitors played much better.",
                "The away team played considerably better after half-time.",
            ),
            (
                "Der Torwart hielt in der letzten Minute einen Elfmeter.",
                "The goalkeeper saved a penalty in the last minute.",
                "In the final minute the goalkeeper stopped a penalty.",
            ),
            (
                "Der Trainer lobte die Leistung seiner jungen Spieler.",
                "The coach praised the performance of his young players.",
                "The manager was full of praise for his young players.",
            ),
            (
                "Mit dem Sieg steht der Verein auf dem dritten Platz.",
                "With the win, the club is in third place.",
                "The victory puts the club in third position.",
            ),
            (
                "Ein Stürmer musste verletzt ausgewechselt werden.",
                "A striker had to be substituted with an injury.",
                "One forward had to come off injured.",
            ),
            (
                "Er fällt voraussichtlich mehrere Wochen aus.",
                "He is expected to be out for several weeks.",
                "He will probably miss several weeks.",
            ),
            (
                "Das Stadion war mit vierzigtausend Zuschauern ausverkauft.",
                "The stadium was sold out with forty thousand spectators.",
                "Forty thousand fans filled the sold-out stadium.",
            ),
            (
                "Am Samstag reist die Mannschaft nach München.",
                "On Saturday the team travels to Munich.",
                "The team will travel to Munich on Saturday.",
            ),
        ],
    ),
    (
        "science",
        [
            (
                "Forscher haben eine neue Art von Frosch im Regenwald entdeckt.",
                "Researchers have discovered a new species of frog in the rainforest.",
                "Scientists have found a new kind of frog in the rain forest.",
            ),
            (
                "Das Tier ist kaum größer als ein Fingernagel.",
                "The animal is hardly bigger than a fingernail.",
                "The creature is barely larger than a fingernail.",
            ),
            (
                "Seine Haut leuchtet unter ultraviolettem Licht.",
                "Its skin glows under ultraviolet light.",
                "Under ultraviolet light its skin shines.",
            ),
            (
                "Die Wissenschaftler vermuten, dass es damit Partner anlockt.",
                "The scientists suspect that it uses this to attract mates.",
                "The researchers believe it does this to attract partners.",
            ),
            (
                "Die Ergebnisse wurden in einer Fachzeitschrift veröffentlicht.",
                "The results were published in a scientific journal.",
                "The findings appeared in a specialist journal.",
            ),
            (
                "Der Lebensraum des Frosches ist durch Abholzung bedroht.",
                "The frog's habitat is threatened by deforestation.",
                "Logging is threatening the frog's habitat.",
            ),
            (
                "Nur wenige hundert Exemplare leben noch in dem Gebiet.",
                "Only a few hundred specimens still live in the area.",
                "Just a few hundred individuals remain in the region.",
            ),
            (
                "Die Forscher fordern deshalb ein neues Schutzgebiet.",
                "The researchers are therefore calling for a new nature reserve.",
                "For this reason the scientists want a new protected area.",
            ),
            (
                "Die Expedition dauerte insgesamt drei Monate.",
                "The expedition lasted three months in total.",
                "Altogether the expedition took three months.",
            ),
            (
                "Im nächsten Jahr wollen sie in das Gebiet zurückkehren.",
                "They want to return to the area next year.",
                "They plan to go back to the region next year.",
            ),
        ],
    ),
    (
        "cooking",
        [
            (
                "Für den Kuchen braucht man vier Eier und zweihundert Gramm Mehl.",
                "For the cake you need four eggs and two hundred grams of flour.",
                "The cake takes four eggs and two hundred grams of flour.",
            ),
            (
                "Zuerst wird die Butter mit dem Zucker schaumig gerührt.",
                "First the butter is beaten with the sugar until fluffy.",
                "Start by creaming the butter and the sugar.",
            ),
            (
                "Dann gibt man die Eier nacheinander dazu.",
                "Then add the eggs one at a time.",
                "Next, the eggs are added one after the other.",
            ),
            (
                "Der Backofen sollte auf hundertachtzig Grad vorgeheizt sein.",
                "The oven should be preheated to one hundred and eighty degrees.",
                "Preheat the oven to 180 degrees.",
            ),
            (
                "Der Teig kommt in eine gefettete Form.",
                "The batter goes into a greased tin.",
                "Pour the mixture into a greased baking tin.",
            ),
            (
                "Nach etwa vierzig Minuten ist der Kuchen fertig.",
                "The cake is ready after about forty minutes.",
                "After roughly forty minutes the cake is done.",
            ),
            (
                "Mit einem Holzstäbchen kann man prüfen, ob er durchgebacken ist.",
                "You can use a wooden skewer to check whether it is cooked through.",
                "A wooden stick will tell you if it is baked through.",
            ),
            (
                "Vor dem Servieren sollte der Kuchen vollständig abkühlen.",
                "The cake should cool completely before serving.",
                "Let the cake cool down fully before you serve it.",
            ),
            (
                "Dazu passt frische Sahne oder Vanilleeis.",
                "Fresh cream or vanilla ice cream goes well with it.",
                "Serve it with fresh cream or vanilla ice cream.",
            ),
            (
                "Der Kuchen hält sich drei Tage im Kühlschrank.",
                "The cake keeps for three days in the fridge.",
                "In the refrigerator the cake will last three days.",
            ),
        ],
    ),
]
