"""A toy feature added the documented way (README "How a feature is shaped"): its core module (rules, no
aiohttp) and its api module (rows and runs, exporting FEATURE), added to the service by one entry in the
features given to create_app."""
