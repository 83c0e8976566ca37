"""The imports run one way: these tests read the source, so an import against the order of the apps (the
architecture page's layers) fails here before it grows."""

from tests.architecture.source import ROOT, imported_modules, imports_of, layers, models_looked_up, modules_in


def test_the_architecture_page_places_every_app_in_one_layer():
    """A new app must be given its place in the order before it can import anything."""
    placed = [app for layer in layers() for app in layer]
    apps = {path.parent.name for path in ROOT.glob("*/apps.py")} - {"simulator"}

    assert sorted(placed) == sorted(apps | {"reviewqueue"})


def test_apps_import_only_lower_apps_beyond_their_models():
    """Between two apps, imports beyond models run one way: a lower app tells a higher one by a signal or a callback.

    ``get_model`` lookups count as imports; ``reviewqueue``, the lowest, imports no app at all, models neither.
    """
    order = layers()
    found = {}
    for height, layer in enumerate(order):
        above = {app for higher in order[height:] for app in higher}
        for app in layer:
            for path in modules_in(app):
                names = imported_modules(path) | models_looked_up(path)
                forbidden = {
                    name
                    for name in names
                    if name.split(".")[0] in above - {app}
                    and (app == "reviewqueue" or name.split(".")[1:2] != ["models"])
                }
                if forbidden:
                    found[str(path.relative_to(ROOT))] = sorted(forbidden)

    assert found == {}


def test_the_simulator_and_the_apps_import_nothing_of_each_other():
    """The simulator stands for the platform: a program apart, speaking to the app only over HTTP."""
    apps = {app for layer in layers() for app in layer}
    found = {
        str(path.relative_to(ROOT)): sorted(names)
        for package, others in [("simulator", apps), *((app, {"simulator"}) for app in apps)]
        for path in modules_in(package)
        if (names := {name for name in imported_modules(path) | models_looked_up(path) if name.split(".")[0] in others})
    }

    assert found == {}


def test_the_edit_rules_do_not_import_the_editing_fields():
    """Editing reads the fields and asks the rules about plain JSON values; the rules know nothing of fields."""
    assert imports_of(ROOT / "holds" / "deciding" / "rules.py", "holds.deciding.editing") == set()
